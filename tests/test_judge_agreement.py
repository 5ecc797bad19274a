"""Judge meta-evaluation on constructed scores with known answers (α by its definition, τb by
scipy on model means the test computes), and in the annotator's stats."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from evaluation.judge_agreement import ScoreSheet, judge_agreement, read_expert_scores


def _alpha_two_raters(a: list[float], b: list[float]) -> float:
    """Interval α for two raters with no gaps, from the definition: 1 − D_o / D_e with
    D_o = mean of (a − b)² and D_e = mean squared difference over all ordered pairs of pooled values."""
    pooled = np.array(a + b, dtype=float)
    observed = np.mean((np.array(a) - np.array(b)) ** 2)
    n = len(pooled)
    expected = sum((x - y) ** 2 for x, y in itertools.product(pooled, repeat=2)) / (n * (n - 1))
    return 1 - observed / expected


MODELS = ("model-a", "model-b", "model-c", "model-d")
E1 = [3, 4, 2, 5, 4, 3, 2, 1, 5, 4, 3, 2]
E2 = [3, 5, 2, 4, 4, 3, 1, 2, 5, 5, 3, 2]
JUDGE = [4, 4, 2, 5, None, 3, 2, 2, 5, 4, None, 1]  # two verdicts missing


def _sheet() -> ScoreSheet:
    units = [(f"item-{i // 4}", MODELS[i % 4]) for i in range(12)]
    sheet = ScoreSheet()
    for name, scores in (("e1", E1), ("e2", E2)):
        sheet.experts[name] = {u: {"factuality": float(s)} for u, s in zip(units, scores, strict=True)}
    sheet.judge = {u: {"factuality": float(s)} for u, s in zip(units, JUDGE, strict=True) if s is not None}
    return sheet


def test_judge_vs_experts_on_a_constructed_set_with_known_alpha():
    from scipy.stats import kendalltau

    result = judge_agreement(_sheet(), axes=["factuality"], resamples=200)
    rows = {r.against: r for r in result.items}
    present = [i for i, s in enumerate(JUDGE) if s is not None]
    judge = [float(JUDGE[i]) for i in present]
    assert rows["e1"].units == 10 and result.judge_missing == 2
    assert rows["e1"].alpha_interval == pytest.approx(_alpha_two_raters(judge, [E1[i] for i in present]), abs=1e-12)
    assert rows["e2"].alpha_interval == pytest.approx(_alpha_two_raters(judge, [E2[i] for i in present]), abs=1e-12)
    mean = [(E1[i] + E2[i]) / 2 for i in present]
    assert rows["expert mean"].alpha_interval == pytest.approx(_alpha_two_raters(judge, mean), abs=1e-12)
    as_zero = [float(s or 0) for s in JUDGE]  # what a missing-as-0 report would compute
    assert rows["e1"].alpha_interval != pytest.approx(_alpha_two_raters(as_zero, [float(x) for x in E1]), abs=1e-3)
    # model level: each model's mean over the units the judge and the experts both scored
    judge_means = [np.mean([JUDGE[i] for i in present if i % 4 == m]) for m in range(4)]
    expert_means = [np.mean([mean[k] for k, i in enumerate(present) if i % 4 == m]) for m in range(4)]
    level = result.models[0]
    assert level.models == 4 and level.tau_b == pytest.approx(kendalltau(judge_means, expert_means).statistic)


def test_a_judge_that_copies_an_expert_has_alpha_one_and_no_judge_gives_no_figure():
    sheet = _sheet()
    sheet.judge = {u: dict(v) for u, v in sheet.experts["e1"].items()}
    rows = {r.against: r for r in judge_agreement(sheet, axes=["factuality"], resamples=100).items}
    assert rows["e1"].alpha_interval == pytest.approx(1.0) and rows["e1"].icc_2_1 == pytest.approx(1.0)
    sheet.judge = {}
    empty = judge_agreement(sheet, axes=["factuality"], resamples=100)
    assert all(r.units == 0 and math.isnan(r.alpha_interval) for r in empty.items)


def test_expert_scores_file_and_bad_lines(tmp_path):
    from curation.core.errors import BenchsmithError

    path = tmp_path / "scores.jsonl"
    path.write_text(json.dumps({"item_id": "i1", "model": "m", "expert": "kim", "factuality": 4,
                                "logical_soundness": 3, "depth": 2, "clarity": 5}) + "\n", encoding="utf-8")
    assert read_expert_scores(path) == {"kim": {("i1", "m"): {"factuality": 4.0, "logic": 3.0, "depth": 2.0,
                                                              "clarity": 5.0}}}
    path.write_text('{"item_id": "i1"}\n', encoding="utf-8")
    with pytest.raises(BenchsmithError, match="missing model, expert"):
        read_expert_scores(path)


def test_annotator_stats_show_the_judge_meta_evaluation(workspace, tmp_path):
    from annotator.review import scoring, stats
    from annotator.review.sample import load_sample, sample_scoring

    from .conftest import run_cli

    load_sample(workspace)
    engine = workspace.store.engine
    rationales, judge = sample_scoring()
    scoring.load_rationales(engine, rationales)
    for n, task in enumerate(scoring.tasks(engine)):
        for expert, shift in (("e1", 0), ("e2", 1)):
            scoring.save_score(engine, task.id, expert, {a: 2 + n + shift for a in scoring.AXES}, "", 0)
    assert stats.judge_meta_evaluation(engine) is None  # no judge scores yet
    scoring.load_judge(engine, judge)
    result = stats.judge_meta_evaluation(engine, resamples=100)
    assert {r.against for r in result.items} == {"e1", "e2", "expert mean"}
    assert all(r.units == len(scoring.tasks(engine)) for r in result.items)
    from annotator.screens.app import _judge_html

    html = _judge_html(engine)
    assert "Judge vs experts" in html and "expert mean" in html
    exported = run_cli("annotate", "export-scores", "--out", str(tmp_path / "experts.jsonl"), "-w", str(workspace.root))
    assert exported.returncode == 0, exported.stderr
    assert read_expert_scores(tmp_path / "experts.jsonl") == stats.score_sheet(engine).experts
