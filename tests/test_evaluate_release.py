"""`benchsmith evaluate --release` as a harness user runs it: the `## benchsmith` line of the
release's `harness/README.md`, verbatim, from another folder, with no workspace, against a
local OpenAI-compatible server. The line sends every row with its images, as the lm-eval,
inspect and HRET commands beside it do; every row counts in n (as lm-eval and inspect count it),
the image rows as not answered for a model given as text-only, and every evaluation keeps its own
report."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fault_server import ServerConfig, ServerThread
from tests.release_support import Responder, expected_outcome, readme_command

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def full_rows(harness_release):
    import pyarrow.parquet as pq

    _, path, _ = harness_release
    manifest = json.loads((path / "release.json").read_text(encoding="utf-8"))
    return [row for name in manifest["configs"]["full"]["files"] for row in pq.read_table(path / name).to_pylist()]


def _images(row) -> int:
    return len(row["question_images"]) + sum(bool(option["image"]) for option in row["options"])


def _has_images(row) -> bool:
    return _images(row) > 0


@pytest.fixture(scope="module")
def server(full_rows):
    responder = Responder({row["question"]: len(row["options"]) for row in full_rows})
    with ServerThread(ServerConfig(responder=responder)) as running:
        yield running, responder


@pytest.fixture
def user_env(tmp_path):
    """A user with a home of their own and no workspace anywhere."""
    env = {key: value for key, value in os.environ.items() if key != "BENCHSMITH_WORKSPACE"}
    home = tmp_path / "home"
    home.mkdir()
    return env | {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
                  "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "COLUMNS": "200"}


def _run(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def _printed(stdout: str, label: str) -> Path:
    found = re.search(rf"^{label}: (\S+)", stdout, re.MULTILINE)
    assert found, stdout
    return Path(found.group(1))


def _overall(report_dir: Path) -> dict[str, str]:
    with (report_dir / "accuracy.csv").open(encoding="utf-8") as handle:
        return next(row for row in csv.DictReader(handle) if row["subset"] == "overall")


def test_the_readme_line_runs_without_a_workspace_and_scores_every_row(harness_release, full_rows, server, user_env,
                                                                       tmp_path):
    _, path, _ = harness_release
    running, responder = server
    image_rows = [row for row in full_rows if _has_images(row)]
    assert image_rows and len(image_rows) < len(full_rows)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    command = readme_command(path, "benchsmith evaluate", url=f"{running.url}/v1")
    assert "-w" not in command.split()  # as a user copies it: no workspace

    seen_before = len(responder.seen)
    first = _run(command, user_env, elsewhere)
    assert first.returncode == 0, first.stderr[-3000:]
    workspace = _printed(first.stdout, "workspace")
    assert workspace == Path(user_env["XDG_DATA_HOME"]) / "benchsmith" / "evaluate"
    assert (workspace / "benchsmith.toml").is_file() and not list(elsewhere.iterdir())
    assert "not answered" not in first.stdout
    assert f"n={len(full_rows)}:" in first.stdout

    # every row was asked once, with each of its question and option images (as lm-eval, inspect, HRET send them)
    asked = [question for question, _ in responder.seen[seen_before:]]
    assert sorted(asked) == sorted(row["question"] for row in full_rows)
    images = {row["question"]: _images(row) for row in full_rows}
    assert all(sent == images[question] for question, sent in responder.seen[seen_before:])

    first_report = _printed(first.stdout, "report").parent
    overall = _overall(first_report)
    # every row, as lm-eval and inspect count them, but an answer still undecided (the report keeps it
    # outside n until a judge or a person decides; the test's own table says which rows those are)
    undecided = sum(expected_outcome(row) == "undecided" for row in full_rows)
    assert int(overall["n"]) == len(full_rows) - undecided and int(overall["undecided"]) == undecided
    assert int(overall["not_answered"]) == 0 and int(overall["not_sent"]) == 0
    assert int(overall["correct"]) == sum(expected_outcome(row) == "correct" for row in full_rows)
    first_text = (first_report / "accuracy.csv").read_bytes()

    # a second evaluation (answered from the run log: nothing is sent again) keeps the first report
    second = _run(command, user_env, elsewhere)
    assert second.returncode == 0, second.stderr[-3000:]
    assert len(responder.seen) == seen_before + len(asked)
    second_report = _printed(second.stdout, "report").parent
    assert second_report != first_report and second_report.parent == first_report.parent
    assert (first_report / "accuracy.csv").read_bytes() == first_text
    assert sorted(p.name for p in first_report.parent.iterdir()) == sorted([first_report.name, second_report.name])
    assert _overall(second_report) == overall

    # `benchsmith report` on the run counts the image rows in n the same way
    run_id = re.search(r"^(\S+): n=", first.stdout, re.MULTILINE).group(1)
    again = run_cli("report", run_id, "-w", str(workspace), "--out", str(tmp_path / "by-report"), "--no-charts",
                    env=user_env)
    assert again.returncode == 0, again.stderr
    assert _overall(tmp_path / "by-report") == overall


def test_a_model_given_as_text_only_counts_the_image_rows_as_not_answered(harness_release, full_rows, server,
                                                                          user_env, tmp_path):
    _, path, _ = harness_release
    running, responder = server
    command = readme_command(path, "benchsmith evaluate", url=f"{running.url}/v1")
    assert "?vision=true" in command
    command = command.replace("?vision=true", "")
    seen_before = len(responder.seen)
    done = _run(command + f" --out {tmp_path / 'report'}", user_env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    image_rows = [row for row in full_rows if _has_images(row)]
    assert f"{len(image_rows)} items not answered (has images; the model is text-only)" in done.stdout
    # the text rows were asked (or answered from the cache of the first test), the image rows never
    asked = {question for question, _ in responder.seen[seen_before:]}
    assert not asked & {row["question"] for row in image_rows}
    overall = _overall(tmp_path / "report")
    undecided = sum(expected_outcome(row) == "undecided" for row in full_rows)
    assert (int(overall["n"]), int(overall["not_answered"])) == (len(full_rows) - undecided, len(image_rows))
    assert "counted in n, never correct" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
