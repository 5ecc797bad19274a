"""Correlations across metrics, subset gaps, external tables and same-item denominators.

Known answers come from the test's own computation (hand counts, scipy on the raw file), never
from today's output."""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest

from curation.core.errors import BenchsmithError
from evaluation.correlation import correlate_pair
from evaluation.metrics import load_run
from evaluation.metrics_table import MetricTable, metrics_from_runs
from evaluation.models import resolve_model
from evaluation.runner import RunRequest, run_model
from filtering.correlate import gather_metrics, run_correlate, run_gap
from filtering.external_tables import TableError, TableSource, load_aliases, load_table
from filtering.gaps import metric_gap

from .conftest import run_cli
from .eval_support import seed_items

KMETBENCH = "kmetbench/leaderboard_table_1_source.json"
KMET_COLUMNS = ["accuracy_pct", "reasoning_4_20", "geo_pct", "multimodal_pct", "part3_pct"]


def _hand_tau_b(x: list[float], y: list[float]) -> float:
    """τb by counting pairs: (C − D) / sqrt((n0 − n1)(n0 − n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        ties_x += dx == 0
        ties_y += dy == 0
        concordant += dx * dy > 0
        discordant += dx * dy < 0
    pairs = len(x) * (len(x) - 1) / 2
    return (concordant - discordant) / math.sqrt((pairs - ties_x) * (pairs - ties_y))


def test_tau_b_and_spearman_on_fixed_vectors_match_scipy_and_a_hand_count():
    from scipy.stats import kendalltau, spearmanr

    x = [0.61, 0.55, 0.55, 0.72, 0.40, 0.66, 0.58, 0.40]
    y = [14.1, 12.0, 12.9, 16.3, 9.8, 14.1, 13.0, 11.2]
    result = correlate_pair(np.array(x), np.array(y), "acc", "reasoning", seed=4, resamples=300)
    assert result.n == 8
    assert result.tau_b == pytest.approx(_hand_tau_b(x, y), abs=1e-12)
    assert result.tau_b == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    assert result.spearman == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert result.tau_ci[0] <= result.tau_b <= result.tau_ci[1]
    too_few = correlate_pair(np.array([1.0, 2.0]), np.array([2.0, 1.0]))
    assert too_few.n == 2 and math.isnan(too_few.tau_b) and too_few.tau_ci is None


@pytest.mark.realdata
def test_correlate_on_the_kmetbench_leaderboard_matches_scipy_on_the_same_file(realdata, tmp_path):
    from scipy.stats import kendalltau, spearmanr

    path = realdata / KMETBENCH
    result = run_cli("analyze", "correlate", "--table", f"kmet={path}", "--model-column", "display_model_name",
                     "--metrics", ",".join(KMET_COLUMNS), "--resamples", "100", "--no-charts",
                     "--out", str(tmp_path / "out"), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    assert data["models"] == len(rows) and data["unmatched"] == {}
    pairs = {(p["a"], p["b"]): p for p in data["pairs"]}
    assert len(pairs) == len(KMET_COLUMNS) * (len(KMET_COLUMNS) - 1) // 2
    for a, b in itertools.combinations(KMET_COLUMNS, 2):
        both = [(r[a], r[b]) for r in rows if r.get(a) is not None and r.get(b) is not None]
        x, y = zip(*both, strict=True)
        pair = pairs[(f"kmet:{a}", f"kmet:{b}")]
        assert pair["n"] == len(both)
        assert pair["tau_b"] == pytest.approx(kendalltau(x, y).statistic, abs=1e-9)
        assert pair["spearman"] == pytest.approx(spearmanr(x, y).statistic, abs=1e-9)
        assert pair["tau_ci"][0] <= pair["tau_b"] <= pair["tau_ci"][1]
    vision = sum(1 for r in rows if r["multimodal_pct"] is not None)
    assert pairs[("kmet:accuracy_pct", "kmet:multimodal_pct")]["n"] == vision < len(rows)
    with (tmp_path / "out" / "correlation.csv").open(encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == len(pairs)


@pytest.mark.realdata
def test_gap_on_the_kmetbench_leaderboard_is_over_vision_models_only(realdata, tmp_path):
    path = realdata / KMETBENCH
    result = run_cli("analyze", "gap", "multimodal_pct", "text_only_pct", "--table", f"kmet={path}",
                     "--model-column", "display_model_name", "--out", str(tmp_path), "--json", "--resamples", "500")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    vision = [r for r in rows if r["multimodal_pct"] is not None]
    assert data["n"] == len(vision)
    assert data["mean_difference"] == pytest.approx(np.mean([r["multimodal_pct"] - r["text_only_pct"] for r in vision]))
    assert len(data["without_both"]) == len(rows) - len(vision)


def _table(values: dict[str, dict[str, float]]) -> MetricTable:
    return MetricTable(columns=values)


def test_gap_on_a_constructed_table_with_a_known_mean_difference(tmp_path):
    from filtering.external_tables import Merged

    rng = np.random.default_rng(7)
    base = rng.uniform(0.3, 0.8, 40)
    noise = rng.normal(0, 0.03, 20)
    differences = 0.05 + np.concatenate([noise, -noise])  # mean exactly 0.05
    table = _table({"multimodal": {f"m{i}": base[i] + differences[i] for i in range(40)},
                    "text_only": {**{f"m{i}": base[i] for i in range(40)}, "text-only-model": 0.5}})
    gap = metric_gap(table, "multimodal", "text_only", seed=1, resamples=2000)
    assert gap.n == 40 and gap.without_both == ["text-only-model"]
    assert gap.mean_difference == pytest.approx(0.05, abs=1e-12)
    half_width = 1.96 * differences.std(ddof=1) / math.sqrt(40)  # the normal approximation, for scale
    assert gap.ci[0] == pytest.approx(0.05 - half_width, abs=0.35 * half_width)
    assert gap.ci[1] == pytest.approx(0.05 + half_width, abs=0.35 * half_width)
    assert gap.wilcoxon_p < 1e-6 and gap.ttest_p < 1e-6
    with pytest.raises(BenchsmithError, match="no model has both"):
        run_gap(Merged(_table({"a": {"x": 1.0}, "b": {"y": 2.0}})), "a", "b", tmp_path)
    same = metric_gap(_table({"a": {"x": 1.0, "y": 2.0}, "b": {"x": 1.0, "y": 2.0}}), "a", "b")
    assert same.mean_difference == 0 and math.isnan(same.wilcoxon_p)  # no difference: no test, not p = 0
    _, files = run_gap(Merged(table), "multimodal", "text_only", tmp_path, resamples=200)
    with files[0].open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 40 and float(rows[0]["difference"]) == pytest.approx(differences[0], abs=1e-6)


def test_tables_aliases_and_unmatched_models_are_listed(tmp_path):
    (tmp_path / "ours.csv").write_text("name,score,family\nalpha-7b,0.61,x\nbeta-8b,0.55,y\ngamma,0.70,z\n"
                                       "delta,,z\n", encoding="utf-8")
    (tmp_path / "theirs.json").write_text(json.dumps({"rows": [
        {"name": "Alpha 7B", "acc": 71.0, "vision": True}, {"name": "beta-8b", "acc": 60.5, "vision": False},
        {"name": "epsilon", "acc": 50.0, "vision": False}]}), encoding="utf-8")
    (tmp_path / "aliases.yaml").write_text("Alpha 7B: alpha-7b\n", encoding="utf-8")
    merged = gather_metrics(None, [TableSource.parse(str(tmp_path / "ours.csv"), "name"),
                                   TableSource.parse(f"lb={tmp_path / 'theirs.json'}", "name")],
                            aliases_path=tmp_path / "aliases.yaml")
    table = merged.table
    assert set(table.columns) == {"ours:score", "lb:acc"}  # text and boolean columns are not metrics
    assert table.columns["ours:score"] == {"alpha-7b": 0.61, "beta-8b": 0.55, "gamma": 0.70}  # empty = missing
    assert table.columns["lb:acc"]["alpha-7b"] == 71.0
    assert merged.unmatched == {"ours": ["delta", "gamma"], "lb": ["epsilon"]}
    result = run_correlate(merged, None, tmp_path / "out", resamples=100, charts=False)
    assert result.results[0].n == 2
    assert "only in lb (1): epsilon" in (tmp_path / "out" / "correlation.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "content", "column", "message"), [
    ("t.csv", "model,score\na,1\n", "name", "no model column 'name'"),
    ("t.csv", "model,score\na,1\na,2\n", "model", "appears in rows 1 and 2"),
    ("t.json", '{"data": 3}', "model", "list of row objects"),
    ("t.json", "{", "model", "not JSON"),
    ("t.csv", "model,score\n", "model", "no rows"),
])
def test_bad_tables_get_one_clear_error(tmp_path, name, content, column, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(TableError, match=message):
        load_table(TableSource(tmp_path / name, column, "t"))


def test_bad_inputs_on_the_command_line_end_in_one_line(tmp_path):
    (tmp_path / "aliases.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(TableError, match="must map names to names"):
        load_aliases(tmp_path / "aliases.yaml")
    missing = run_cli("analyze", "correlate", "--table", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 1 and "no such table file" in missing.stderr and "Traceback" not in missing.stderr
    (tmp_path / "t.csv").write_text("model,a,b\nx,1,2\ny,2,1\n", encoding="utf-8")
    unknown = run_cli("analyze", "gap", "a", "zzz", "--table", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o"))
    assert unknown.returncode == 1 and "no metric 'zzz'" in unknown.stderr


def test_workspace_metrics_use_the_same_items_for_every_model(workspace):
    from .fault_server import ServerThread

    seed_items(workspace, n_text=10, n_image=4)
    with ServerThread() as server:
        vision = run_model(workspace, RunRequest(resolve_model(f"openai-compatible:seer@{server.url}/v1?vision=true")))
    text_only = run_model(workspace, RunRequest(resolve_model("baseline:longest")))
    runs = [load_run(r.run_dir, workspace) for r in (vision, text_only)]
    table = metrics_from_runs(runs)
    text_items = {i for i in runs[0].records if i.startswith("eval-text")}
    for run in runs:  # overall: only the text items, for both models (the image items were not sent to one)
        expected = np.mean([run.records[i].outcome == "correct" for i in text_items])
        assert table.columns["acc:overall"][run.model_name] == pytest.approx(expected)
    assert table.items["acc:overall"] == 10
    assert any("acc:overall" in note and "4 excluded for all" in note for note in table.notes)
    assert set(table.columns["acc:multimodal"]) == {runs[0].model_name}  # nothing to compare the text-only model on
    assert any("acc:multimodal: not sent to baseline:longest" in note for note in table.notes)
    own = metrics_from_runs(runs, same_items=False)
    assert own.columns["acc:overall"][runs[0].model_name] == pytest.approx(
        np.mean([r.outcome == "correct" for r in runs[0].records.values()]))
    assert any("different item sets" in note for note in own.notes)
    with pytest.raises(BenchsmithError, match="no metrics"):
        gather_metrics(None, [])


def test_correlate_command_joins_runs_and_an_external_table_by_alias(workspace, tmp_path):
    from scipy.stats import kendalltau

    from curation.core.item import parse_item
    from evaluation.models import parse_inline_spec
    from evaluation.runlog import RESPONSES, read_records
    from filtering.adversarial import FilterPlan, filter_and_record

    from .eval_support import text_record

    answers = [2] * 6 + [1] * 3 + [4] * 3  # the baselines differ: longest 6/12, position-1 3/12
    items = [parse_item(text_record(n, answer=a)) for n, a in enumerate(answers, start=1)]
    workspace.store.save_items(items, author="test", stage="test")
    ids = [item.id for item in items]
    names = ("baseline:longest", "baseline:shortest", "baseline:position-1")
    summaries = [run_model(workspace, RunRequest(resolve_model(name))) for name in names]
    record, _ = filter_and_record(workspace, FilterPlan([parse_inline_spec("baseline:longest")]), "hard")
    hard = record.survivors
    assert sorted(hard) == sorted(ids[6:])  # longest picks option 2: it misses exactly the other answers
    external = {"Longest": 0.9, "baseline:shortest": 0.2, "baseline:position-1": 0.5, "unknown-model": 0.4}
    (tmp_path / "ext.csv").write_text("name,score\n" + "".join(f"{k},{v}\n" for k, v in external.items()),
                                      encoding="utf-8")
    (tmp_path / "aliases.yaml").write_text("Longest: 'baseline:longest'\n", encoding="utf-8")
    result = run_cli("analyze", "correlate", "-w", str(workspace.root), "--table", f"ext={tmp_path / 'ext.csv'}",
                     "--model-column", "name", "--aliases", str(tmp_path / "aliases.yaml"),
                     "--metrics", "acc:overall,acc:hard,ext:score", "--resamples", "100", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["unmatched"] == {"ext": ["unknown-model"]}
    records = {name: read_records(s.run_dir / RESPONSES) for name, s in zip(names, summaries, strict=True)}
    overall = [np.mean([r["outcome"] == "correct" for r in records[n].values()]) for n in names]
    on_hard = [np.mean([records[n][i]["outcome"] == "correct" for i in hard]) for n in names]
    scores = [0.9, 0.2, 0.5]
    pairs = {(p["a"], p["b"]): p for p in data["pairs"]}
    assert pairs[("acc:overall", "ext:score")]["n"] == 3
    assert overall[0] == 0.5 and on_hard[0] == 0.0 and on_hard[2] == 0.5  # position-1 solves the answer-1 half
    assert pairs[("acc:overall", "ext:score")]["tau_b"] == pytest.approx(kendalltau(overall, scores).statistic)
    assert pairs[("acc:hard", "ext:score")]["tau_b"] == pytest.approx(kendalltau(on_hard, scores).statistic)
    assert (workspace.root / "analysis" / "correlate" / "correlation.md").is_file()


def test_one_observation_gives_a_point_interval_not_an_error():
    from evaluation.metrics import bootstrap_ci

    assert bootstrap_ci(np.array([1.0]), 0) == (1.0, 1.0)  # a subset of one item (scipy alone refuses)
    gap = metric_gap(_table({"a": {"x": 0.7}, "b": {"x": 0.5}}), "a", "b")
    assert gap.n == 1 and gap.ci == (pytest.approx(0.2), pytest.approx(0.2)) and math.isnan(gap.wilcoxon_p)
