"""The executor seam on this machine: deterministic shards, a local process pool that gives the
same results as one process, resume without re-sending, failing shards reported while the rest
completes, and one-line errors for a missing ray extra. Real servers on 127.0.0.1, real SQLite."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from curation.execution.executors import InProcessExecutor, ProcessPoolExecutor
from evaluation.models import resolve_model
from evaluation.runner import RunRequest, run_model
from evaluation.sender import SenderSettings
from evaluation.sharded_run import plan_slices, run_models, shard_resources
from tests.conftest import REPO, run_cli
from tests.eval_support import seed_items
from tests.fault_server import ServerThread

from .scaleout_support import log_lines, run_results, stored_items, truth_questions, write_sample_pdfs

SETTINGS = SenderSettings(concurrency=8, backoff_base_s=0.01, backoff_cap_s=0.05, max_retries=2, timeout_s=10)


def _specs(url: str) -> list[str]:
    return ["baseline:longest", "baseline:position-2", f"openai-compatible:fake-model@{url}/v1"]


def test_shards_are_sorted_fixed_slices_and_vllm_asks_for_its_gpus() -> None:
    api = resolve_model("openai-compatible:m@http://127.0.0.1:9/v1")
    ids = [f"item-{n:03d}" for n in (7, 3, 11, 1, 5)]
    assert plan_slices(ids, api, 2) == [["item-001", "item-003"], ["item-005", "item-007"], ["item-011"]]
    assert plan_slices(list(reversed(ids)), api, 2) == plan_slices(ids, api, 2)
    vllm = resolve_model("vllm:Qwen/Qwen3-8B?tensor_parallel_size=2")
    assert plan_slices(ids, vllm, 2) == [sorted(ids)]
    assert shard_resources(vllm) == (1.0, 2.0) and shard_resources(api) == (1.0, 0.0)


def test_local_pool_gives_the_records_of_one_process_and_a_rerun_sends_nothing(tmp_path) -> None:
    from curation.core.workspace import init_workspace

    pooled, alone = init_workspace(tmp_path / "pooled"), init_workspace(tmp_path / "alone")
    for ws in (pooled, alone):
        seed_items(ws, n_text=60, n_image=4)
    with ServerThread() as server:
        specs = [resolve_model(spec + ("?vision=true" if spec.startswith("openai") else "")) for spec in _specs(server.url)]
        for spec in specs:
            run_model(alone, RunRequest(spec, settings=SETTINGS))
        requests_alone = server.stats.requests
        executor = ProcessPoolExecutor(2)
        try:
            result = run_models(pooled, [RunRequest(spec, settings=SETTINGS) for spec in specs], executor, shard_size=16)
        finally:
            executor.close()
        requests_pooled = server.stats.requests - requests_alone
        again = run_models(pooled, [RunRequest(spec, settings=SETTINGS) for spec in specs], InProcessExecutor())
        requests_again = server.stats.requests - requests_alone - requests_pooled
    assert result.failed == {}
    assert run_results(pooled) == run_results(alone)
    expected = [60, 60, 64]  # the baselines are text-only: the 4 items with images are not theirs
    assert [len(records) for records in run_results(pooled).values()] == expected
    assert requests_alone == requests_pooled == 64  # images included: they travel to the workers as bytes
    assert [log_lines(summary.run_dir) for summary in result.summaries] == expected
    assert requests_again == 0 and [s.done_before for s in again.summaries] == expected
    assert all(s.stats["scheduled"] == 0 for s in again.summaries)


def test_cached_requests_are_never_scheduled_again(workspace) -> None:
    seed_items(workspace, n_text=30, n_image=0)
    with ServerThread() as server:
        spec = resolve_model(f"openai-compatible:fake-model@{server.url}/v1")
        run_model(workspace, RunRequest(spec, settings=SETTINGS))
        fresh = run_models(workspace, [RunRequest(spec, resume=False, settings=SETTINGS)], InProcessExecutor(),
                           shard_size=7)
        requests = server.stats.requests
    summary = fresh.summaries[0]
    assert requests == 30 and summary.stats["cached"] == 30 and summary.stats["scheduled"] == 0
    assert sum(summary.counts.values()) == 30


def test_a_shard_that_keeps_failing_is_reported_and_the_rest_completes(workspace) -> None:
    seed_items(workspace, n_text=20, n_image=0)
    progress = []
    requests = [RunRequest(resolve_model(spec), settings=SETTINGS)
                for spec in ("baseline:longest", "openai-compatible:gone@http://127.0.0.1:9/v1")]
    result = run_models(workspace, requests, InProcessExecutor(), shard_size=10, max_attempts=2,
                        on_progress=progress.append)
    assert sorted(result.failed) == ["openai-compatible:gone#0000", "openai-compatible:gone#0001"]
    assert all("cannot reach http://127.0.0.1:9/v1" in error for error in result.failed.values())
    baseline, gone = result.summaries
    assert sum(baseline.counts.values()) == 20 and baseline.stats["failed_shards"] == {}
    assert sum(gone.counts.values()) == 0 and gone.stats["not_finished"] == 20
    assert [p.kind for p in progress].count("retry") == 2 and [p.kind for p in progress].count("failed") == 2


def test_cli_several_models_reports_the_failing_shard_in_one_line_and_keeps_the_rest(workspace) -> None:
    seed_items(workspace, n_text=12, n_image=0)
    result = run_cli("run", "-w", str(workspace.root), "-m", "baseline:longest", "-m",
                     "openai-compatible:gone@http://127.0.0.1:9/v1", "--retries", "0", "--max-attempts", "2",
                     "--no-progress")
    assert result.returncode == 1
    failures = [line for line in result.stderr.splitlines() if line.startswith("shard ")]
    assert failures == ["shard openai-compatible:gone#0000 failed: cannot reach http://127.0.0.1:9/v1: "
                        + failures[0].split("/v1: ", 1)[1]]
    assert "Traceback" not in result.stderr
    assert "rerun" in failures[0]
    assert sorted(map(len, run_results(workspace).values())) == [0, 12]


def test_cli_model_list_file_runs_every_model(workspace, tmp_path) -> None:
    seed_items(workspace, n_text=10, n_image=0)
    listing = tmp_path / "models.txt"
    listing.write_text("# baselines\nbaseline:longest\nbaseline:last  # the last option\n", encoding="utf-8")
    result = run_cli("run", "-w", str(workspace.root), "--model-list", str(listing), "--json", "--workers", "2")
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert [sum(run["counts"].values()) for run in runs] == [10, 10]
    assert len(run_results(workspace)) == 2


def test_missing_ray_extra_is_one_line_and_runs_nothing(workspace) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    script = ("import sys; sys.modules['ray'] = None; from benchsmith.cli import main; "
              f"sys.argv = ['benchsmith', 'run', '-w', {str(workspace.root)!r}, '-m', 'baseline:longest', "
              "'--executor', 'ray']; main()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1].endswith("ray is not installed: pip install 'benchsmith[ray]'")
    assert "Traceback" not in result.stderr
    assert run_results(workspace) == {}


def test_ray_address_without_ray_executor_is_refused(workspace) -> None:
    result = run_cli("extract", "-w", str(workspace.root), "x.pdf", "--ray-address", "auto")
    assert result.returncode != 0 and "--ray-address needs --executor ray" in result.stderr


def test_extract_many_pdfs_in_a_pool_writes_what_one_process_writes(tmp_path) -> None:
    from curation.core.workspace import init_workspace

    pdfs = write_sample_pdfs(tmp_path / "pdfs", range(4))
    bad = tmp_path / "pdfs" / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7 not really")
    pooled, alone = init_workspace(tmp_path / "pooled"), init_workspace(tmp_path / "alone")
    one = run_cli("extract", "-w", str(alone.root), *map(str, pdfs), "--workers", "1", "--json")
    many = run_cli("extract", "-w", str(pooled.root), str(bad), *map(str, pdfs), "--workers", "2", "--json")
    assert one.returncode == 0, one.stderr
    assert many.returncode == 1  # the broken file, reported with its own path; the others written
    reports = json.loads(many.stdout)
    assert reports[0]["path"] == str(bad) and str(bad) in reports[0]["error"]
    assert [r["path"] for r in reports[1:]] == [str(p) for p in pdfs]
    assert stored_items(pooled) == stored_items(alone) and len(stored_items(alone)) == truth_questions(pdfs) > 0
    assert [r["created"] for r in reports[1:]] == [r["created"] for r in json.loads(one.stdout)]


@pytest.mark.parametrize("executor", ["ray"])
def test_engine_mineru_stays_on_this_machine(workspace, executor) -> None:
    result = run_cli("extract", "-w", str(workspace.root), "x.pdf", "--engine", "mineru", "--executor", executor)
    assert result.returncode != 0 and "--engine mineru runs on this machine only" in result.stderr
