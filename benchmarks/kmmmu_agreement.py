"""How far the checkers, and the checkers with a judge for what they leave undecided, agree with labels a
person made by reading KMMMU's 400 real responses (tests/data/kmmmu_labels.csv). Prints figures;
asserts nothing (tests/test_kmmmu_agreement.py asserts floors under them).

    python benchmarks/kmmmu_agreement.py [--rows]

Through the command line, in a fresh workspace: `items import` of the gpt-5-mini KMMMU CSV with its
images, `runs import` of the four models' files (no judge: the checkers alone), then again with
`--judge` pointed at a local OpenAI-compatible server that answers each judging request with the
published `is_correct` of the response it quotes (the published judge, asked only about what no
checker decides). How an outcome is compared with a label is tests/kmmmu_support.py's docstring:
checker decisions three ways (correct / wrong / unparseable or error ↔ correct / incorrect /
no_answer), final outcomes by credit (correct or not; still undecided agrees only with no_answer).
`--rows` lists every row where the checkers, or the final outcome, differ from the label.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from tests.conftest import realdata_dir  # noqa: E402
from tests.fault_server import ServerConfig, ServerThread  # noqa: E402
from tests.kmmmu_support import (  # noqa: E402
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


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "benchsmith.cli", *args], capture_output=True, text=True, cwd=HERE)
    if done.returncode != 0:
        raise SystemExit(f"benchsmith {' '.join(args[:3])} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def import_runs(ws: Path, realdata: Path, *extra: str) -> list[dict]:
    out = cli("runs", "import", *map(str, judge_csvs(realdata)), *(f"--model={model}" for model in MODELS), "--json",
              "-w", str(ws), *extra)
    return json.loads(out)["runs"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", action="store_true", help="list the rows that differ from the labels")
    args = parser.parse_args()
    realdata = realdata_dir()
    if realdata is None:
        raise SystemExit("../shared/realdata is not present")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        cli("init", str(ws))
        cli("items", "import", str(judge_csv(realdata, "gpt-5-mini")), "--images",
            str(realdata / "kmmmu_judge" / "images"), "-w", str(ws))
        alone = outcome_rows(ws, import_runs(ws, realdata))
        judge = PublishedJudge(realdata)
        with ServerThread(ServerConfig(responder=judge)) as server:
            summaries = import_runs(ws, realdata, "--judge", f"openai-compatible:judge@{server.url}/v1")
        if judge.misses:
            raise SystemExit(f"the replayed judge could not place {len(judge.misses)} request(s): {judge.misses[:3]}")
        judged = sum(summary["judged"] for summary in summaries)
        final = final_figures(outcome_rows(ws, summaries), judged)

    everything = checker_tallies(alone, lambda row: row.format)["all"]
    n = final.rows
    print(f"KMMMU: {n} responses (100 items × {len(MODELS)} models) against tests/data/kmmmu_labels.csv\n")
    print(f"{'':34} {'agree with the labels':>32} {'judge asked':>14}")
    print(f"{'checkers alone, on what they decide':34} {everything.decided_agree:>9}/{everything.decided} "
          f"{everything.agreement:6.1%} (credit {everything.credit:5.1%}) {'-':>7} ({everything.undecided} = "
          f"{everything.undecided / n:.1%} left undecided)")
    print(f"{'checkers + judge for the undecided':34} {final.credit_agree:>9}/{n} {final.credit_agree / n:6.1%} "
          f"(3 ways {final.strict_agree / n:5.1%}) {judged:>7} ({judged / n:.1%})")
    print(f"{'published judge alone':34} {final.published_agree:>9}/{n} {final.published_agree / n:6.1%} "
          f"{'':15} {n:>7} (100%)")
    print(f"\nthe checkers against the labels (decided: correct, wrong, unparseable or error):\n{checker_table(alone)}")
    if args.rows:
        print("\nrows the checkers decide otherwise than the labels:")
        for row in disagreements(alone):
            print("  " + describe(row))
        print("\nrows whose final outcome (checkers + judge) differs from the label, by credit:")
        for row in final.misses:
            print("  " + describe(row))


if __name__ == "__main__":
    main()
