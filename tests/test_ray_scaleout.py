"""On a real two-node Ray cluster (127.0.0.1 only, one CPU per node, stopped at the end): runs and
extraction give what the local executor gives; a worker killed mid-shard loses no item and no
cached request is sent again; an unreachable cluster is one clear line. Skipped without the extra."""

from __future__ import annotations

import os
import re
import signal
from collections import Counter

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'benchsmith[ray]')")

from curation.core.workspace import init_workspace  # noqa: E402
from curation.execution.executors import ProcessPoolExecutor, Started  # noqa: E402
from curation.sample_exam.content import SHORT_ANSWERS  # noqa: E402
from evaluation.models import resolve_model  # noqa: E402
from evaluation.runlog import RESPONSES, read_records  # noqa: E402
from evaluation.runner import RunRequest  # noqa: E402
from evaluation.sender import SenderSettings  # noqa: E402
from evaluation.sharded_run import run_models  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from tests.eval_support import seed_items  # noqa: E402
from tests.fault_server import ServerConfig, ServerThread  # noqa: E402

from .ray_cluster import pin_loopback, two_node_cluster  # noqa: E402
from .scaleout_support import log_lines, run_results, stored_items, truth_questions, write_sample_pdfs  # noqa: E402

pytestmark = pytest.mark.ray
SETTINGS = SenderSettings(concurrency=8, backoff_base_s=0.01, backoff_cap_s=0.05, max_retries=2, timeout_s=20)
ITEMS = 500


@pytest.fixture(scope="module")
def ray_address():
    with two_node_cluster() as address:
        pin_loopback()
        yield address


@pytest.fixture
def ray_executor(ray_address):
    from curation.execution.ray_executor import RayExecutor

    executor = RayExecutor(ray_address)
    yield executor
    executor.close()


def _requests(url: str) -> list[RunRequest]:
    specs = ["baseline:longest", "baseline:similar", f"openai-compatible:fake-model@{url}/v1"]
    return [RunRequest(resolve_model(spec), settings=SETTINGS) for spec in specs]


def test_three_models_over_500_items_on_ray_match_the_local_executor(tmp_path, ray_executor) -> None:
    on_ray, local = init_workspace(tmp_path / "ray"), init_workspace(tmp_path / "local")
    for ws in (on_ray, local):
        seed_items(ws, n_text=ITEMS, n_image=0)
    started: list[Started] = []
    started_keys: list[str] = []
    with ServerThread() as server:
        pool = ProcessPoolExecutor(2)
        try:
            run_models(local, _requests(server.url), pool, shard_size=50)
        finally:
            pool.close()
        sent_local = server.stats.requests
        result = run_models(on_ray, _requests(server.url), ray_executor, shard_size=50,
                            on_progress=lambda p: (started.append(p.started), started_keys.append(p.key))
                            if p.started else None)
        sent_ray = server.stats.requests - sent_local
    assert result.failed == {}
    assert run_results(on_ray) == run_results(local)
    assert [len(records) for records in run_results(on_ray).values()] == [ITEMS] * 3
    assert sent_local == sent_ray == ITEMS
    assert len({s.node for s in started}) == 2  # both nodes took shards
    # the baselines answer in the driver; only the served model goes out, as 10 shards each started once
    assert len(started) == 10 and {key.split("#")[0] for key in started_keys} == {"openai-compatible:fake-model"}
    assert [s.stats.get("computed_locally", 0) for s in result.summaries] == [ITEMS, ITEMS, 0]


def test_killing_a_worker_mid_run_loses_no_item_and_resends_no_cached_request(tmp_path, ray_executor) -> None:
    ws = init_workspace(tmp_path / "ws")
    seed_items(ws, n_text=ITEMS, n_image=0)
    config = ServerConfig(latency=0.05, keep_requests=10 * ITEMS)
    kill: dict[str, object] = {}
    running: dict[str, Started] = {}
    received: Counter = Counter()
    progress_kinds: list[str] = []

    def on_progress(event) -> None:
        progress_kinds.append(event.kind)
        if event.kind == "started":
            running[event.key] = event.started
        received[event.key] += event.units if event.kind == "units" else 0
        if (not kill and event.kind == "units" and event.key.startswith("openai-compatible")
                and received[event.key] >= 10 and event.key in running):
            run_dir = next(p for p in ws.runs_dir.iterdir() if p.name.startswith("openai-compatible"))
            os.kill(running[event.key].pid, signal.SIGKILL)
            kill.update(key=event.key, logged=set(read_records(run_dir / RESPONSES)))

    with ServerThread(config) as server:
        result = run_models(ws, _requests(server.url), ray_executor, shard_size=100, on_progress=on_progress)
        bodies = list(server.stats.bodies)
    assert kill, "no openai-compatible shard was running to kill"
    assert result.failed == {}
    assert progress_kinds.count("retry") >= 1
    for summary in result.summaries:
        assert len(read_records(summary.run_dir / RESPONSES)) == ITEMS  # no item lost
        assert log_lines(summary.run_dir) == ITEMS  # and none logged twice
    numbers = (re.search(r"문항 (\d+):", b["body"]["messages"][1]["content"]).group(1) for b in bodies)
    asked = Counter(f"eval-text-{int(number):03d}" for number in numbers)
    twice = {item_id for item_id, count in asked.items() if count > 1}
    # Only requests the driver had not received at the kill (in flight or not yet streamed back
    # from the killed worker) may be sent again; nothing it had logged and cached was.
    assert not twice & kill["logged"]
    assert len(asked) == ITEMS and len(twice) <= SETTINGS.concurrency + 64


def test_extracting_20_pdfs_on_ray_gives_the_items_of_a_local_run(tmp_path, ray_address) -> None:
    pdfs = write_sample_pdfs(tmp_path / "pdfs", range(20))
    on_ray, local = init_workspace(tmp_path / "ray"), init_workspace(tmp_path / "local")
    env = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # the CLI driver, too, keeps to 127.0.0.1
    here = run_cli("extract", "-w", str(local.root), *map(str, pdfs), "--json")
    there = run_cli("extract", "-w", str(on_ray.root), *map(str, pdfs), "--executor", "ray", "--ray-address",
                    ray_address, "--json", env=env)
    assert here.returncode == 0, here.stderr
    assert there.returncode == 0, there.stderr
    items = stored_items(on_ray)
    assert items == stored_items(local) and len(items) == truth_questions(pdfs) == 20 * (26 + len(SHORT_ANSWERS))
    assert len({record["source"]["pdf_sha256"] for record in items.values()}) == 20


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_unreachable_cluster_is_one_line_and_writes_nothing(workspace, address) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    result = run_cli("run", "-w", str(workspace.root), "-m", "baseline:longest", "--executor", "ray",
                     "--ray-address", address)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: cannot reach the Ray cluster at {address}: Connection refused (start one with `ray start --head`; "
        "nothing was run)"]
    assert "Traceback" not in result.stderr and run_results(workspace) == {}
