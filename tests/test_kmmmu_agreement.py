"""The checkers, and the answer judge for what they leave undecided, against labels a person made by
reading KMMMU's 400 real responses (tests/data/kmmmu_labels.csv; `tests/kmmmu_support.py` says how an
outcome is compared with a label). Everything goes through the command line: `items import` of the
KMMMU CSV with its images, `runs import` of the four models' files, with and without `--judge`.

Figures (printed by these tests and by benchmarks/kmmmu_agreement.py) are in the assertions' floors:
each floor sits two points under what was measured, so a checker that regresses fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fault_server import ServerConfig, ServerThread
from tests.kmmmu_support import (
    MODELS,
    PublishedJudge,
    checker_table,
    checker_tallies,
    describe,
    disagreements,
    final_figures,
    judge_csv,
    judge_csvs,
    outcome_rows,
)

pytestmark = pytest.mark.realdata

# Floors two points under what was measured (checkers choice-3, set-2, the other formats -2), on the
# rows the checkers decide (319 of 400): agreement per format and per model, and overall 309 / 319
# = 96.9% (credit only: 318 / 319 = 99.7%); 81 of 400 (20.2%) left to a judge.
CHECKER_AGREEMENT_FLOOR = {"all": 0.949, "choice": 0.955, "set": 0.968, "numeric": 0.947, "expression": 0.944,
                           "text": 0.837, "parts": 0.869, "judged": 0.98}
MODEL_AGREEMENT_FLOOR = {"gpt-5-mini": 0.98, "qwen3-VL-2b-it": 0.968, "qwen3-VL-30b-it": 0.896, "varco2-14b": 0.953}
CHECKER_CREDIT_FLOOR = 0.977
UNDECIDED_CEILING = 0.222  # share of the 400 responses no checker decides
# The targets: checkers + a judge only for the undecided agree with the labels on ≥ 98% (credit:
# measured 397 / 400 = 99.2%; three ways 96.0%), the judge asked about ≤ 35% (measured 81 = 20.2%).
CREDIT_TARGET = 0.98
STRICT_FLOOR = 0.94
JUDGED_CEILING = 0.35
PUBLISHED_ALONE = 380  # the published judge's verdicts on all 400, against the labels (95.0%)


def _workspace(tmp_path: Path, realdata: Path) -> Path:
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    done = run_cli("items", "import", str(judge_csv(realdata, "gpt-5-mini")), "--images",
                   str(realdata / "kmmmu_judge" / "images"), "--json", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    return ws


def _import(ws: Path, realdata: Path, *extra: str) -> list[dict]:
    done = run_cli("runs", "import", *map(str, judge_csvs(realdata)), *(f"--model={model}" for model in MODELS),
                   "--json", "-w", str(ws), *extra)
    assert done.returncode == 0, done.stderr
    summaries = json.loads(done.stdout)["runs"]
    assert [(s["rows"], s["matched"]) for s in summaries] == [(100, 100)] * 4
    return summaries


def test_the_checkers_agree_with_the_labels_on_what_they_decide(realdata, tmp_path):
    ws = _workspace(tmp_path, realdata)
    summaries = _import(ws, realdata)
    rows = outcome_rows(ws, summaries)
    assert len(rows) == 400 and len({(row.model, row.file_id) for row in rows}) == 400  # each label once
    assert all(row.decided_by == "checker" for row in rows)
    print("\n" + checker_table(rows))
    differ = disagreements(rows)
    print(f"{len(differ)} rows the checkers decide otherwise than the labels:")
    for row in differ:
        print("  " + describe(row))

    by_format = checker_tallies(rows, lambda row: row.format)
    for name, floor in CHECKER_AGREEMENT_FLOOR.items():
        tally = by_format[name]
        assert tally.agreement >= floor, (name, tally)
    everything = by_format["all"]
    assert everything.undecided / everything.rows <= UNDECIDED_CEILING
    assert everything.credit >= CHECKER_CREDIT_FLOOR
    assert by_format["judged"].decided == by_format["judged"].decided_agree  # a judged key decides only no answer
    by_model = checker_tallies(rows, lambda row: row.model)
    for model, floor in MODEL_AGREEMENT_FLOOR.items():
        assert by_model[model].decided >= 60 and by_model[model].agreement >= floor, (model, by_model[model])


def test_checkers_plus_a_judge_for_the_undecided_reach_the_labels(realdata, tmp_path):
    """The judge is a local server answering each judging request with the published `is_correct` of
    the response it quotes: the published judge, asked only about what no checker decides."""
    ws = _workspace(tmp_path, realdata)
    judge = PublishedJudge(realdata)
    with ServerThread(ServerConfig(responder=judge)) as server:
        spec = f"openai-compatible:judge@{server.url}/v1"
        summaries = _import(ws, realdata, "--judge", spec)
        assert judge.misses == []
        judged = sum(summary["judged"] for summary in summaries)
        rows = outcome_rows(ws, summaries)
        figures = final_figures(rows, judged)
        print("\n" + figures.line())
        for row in figures.misses:
            print("  " + describe(row))
        # only what no checker decided went to the judge, and took the published verdict
        by_judge = [row for row in rows if row.decided_by == "judge"]
        assert len(by_judge) == judged == server.stats.requests
        assert all(row.checker_outcome == "undecided" for row in by_judge)
        assert all(row.outcome == ("correct" if row.published else "wrong") for row in by_judge)
        assert figures.left_undecided == 0
        assert figures.credit_agree / figures.rows >= CREDIT_TARGET
        assert figures.strict_agree / figures.rows >= STRICT_FLOOR
        assert judged / figures.rows <= JUDGED_CEILING
        assert figures.published_agree == PUBLISHED_ALONE

        # every response judged (KMMMU's protocol): the replayed verdicts are the published ones,
        # 400 of 400 (the server places every request), and the checkers' decisions stand
        done = run_cli("runs", "judge", *(s["run_id"] for s in summaries), "--judge", spec, "--judge-all",
                       "--json", "-w", str(ws))
        assert done.returncode == 0, done.stderr
        assert judge.misses == [] and len(judge.asked) == 400 and len(set(judge.asked)) == 400
        after = outcome_rows(ws, summaries)
        assert [row.outcome for row in after] == [row.outcome for row in rows]
        with_checker = [run["with_checker"] for run in json.loads(done.stdout)["runs"]]
        agree = sum(counts["agree"] for counts in with_checker)
        disagree = sum(counts["disagree"] for counts in with_checker)
        print(f"the published judge and the checkers, on the checkers' correct/wrong: agree {agree}, "
              f"disagree {disagree}")
        assert agree + disagree == sum(row.checker_outcome in ("correct", "wrong") for row in rows)
