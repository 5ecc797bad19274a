"""A release downloaded into the Hugging Face Hub cache (a snapshot folder of relative symlinks
into `blobs/`) runs in the harnesses as `harness/README.md` says: inspect from the snapshot
itself, lm-eval from the copy the README's workaround makes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from export.harness import task_name
from tests.fault_server import ServerConfig, ServerThread
from tests.release_support import Responder, expected_outcome, fill_placeholders

pytest.importorskip("huggingface_hub")
pytest.importorskip("lm_eval", reason="the harness extra (lm_eval[api]) is not installed")
pytest.importorskip("inspect_ai", reason="the harness extra (inspect_ai) is not installed")
BIN = Path(sys.executable).parent
REPO_ID = "benchsmith-test/parity-exam"
LFS_SUFFIXES = {".parquet", ".png", ".jpg", ".jpeg"}  # tracked by LFS in the Hub's default .gitattributes


def _blob_name(data: bytes, suffix: str) -> str:
    """The name huggingface_hub gives a blob: its etag, the sha256 for an LFS file, else the git blob sha1."""
    if suffix in LFS_SUFFIXES or len(data) > 10 * 1024 * 1024:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def hub_cache_snapshot(release: Path, cache: Path, repo_id: str) -> Path:
    """Lay `release` out as `hf download` leaves a dataset repo in the cache: blobs/ named by etag,
    snapshots/REV/ mirroring the repo with relative symlinks (as file_download._create_symlink
    makes them), refs/main naming REV."""
    storage = cache / ("datasets--" + repo_id.replace("/", "--"))
    files = sorted(p for p in release.rglob("*") if p.is_file())
    tree = hashlib.sha1()
    for path in files:
        tree.update(path.relative_to(release).as_posix().encode() + b"\0" + path.read_bytes())
    revision = tree.hexdigest()
    snapshot = storage / "snapshots" / revision
    for path in files:
        data = path.read_bytes()
        blob = storage / "blobs" / _blob_name(data, path.suffix)
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / path.relative_to(release)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (storage / "refs").mkdir(parents=True)
    (storage / "refs" / "main").write_text(revision)
    return snapshot


@pytest.fixture(scope="module")
def cached(harness_release, tmp_path_factory):
    """(snapshot folder, HF_HUB_CACHE, the full config's rows)."""
    import pyarrow.parquet as pq
    from huggingface_hub import snapshot_download

    _, release, _ = harness_release
    cache = tmp_path_factory.mktemp("hub") / "hub"
    snapshot = hub_cache_snapshot(release, cache, REPO_ID)
    # huggingface_hub itself finds it: the layout is the cache's own
    assert Path(snapshot_download(REPO_ID, repo_type="dataset", cache_dir=cache, local_files_only=True)) == snapshot
    assert (snapshot / "harness" / "inspect" / "task.py").is_symlink()
    manifest = json.loads((release / "release.json").read_text(encoding="utf-8"))
    rows = [row for name in manifest["configs"]["full"]["files"] for row in pq.read_table(release / name).to_pylist()]
    return snapshot, cache, rows


@pytest.fixture(scope="module")
def server(cached):
    _, _, rows = cached
    with ServerThread(ServerConfig(responder=Responder({row["question"]: len(row["options"]) for row in rows}))) as running:
        yield running


def _expected_scores(release: Path, rows) -> dict[str, bool]:
    """Row id → correct for the scripted replies, from the test's own table of replies (the
    release's own checkers score them so in the parity tests)."""
    return {row["id"]: expected_outcome(row) == "correct" for row in rows}


def _readme_line(release: Path, contains: str) -> str:
    """The command in a code block of `harness/README.md` that contains `contains` (continuations joined)."""
    text = (release / "harness" / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    commands = text.split("```")[1::2]
    return next(line for block in commands for line in block.splitlines() if contains in line)


def _fill(line: str, *, release: Path, url: str) -> str:
    return fill_placeholders(line, release=release, url=url).replace("ORG/NAME", REPO_ID)


def _env(tmp: Path, cache: Path) -> dict[str, str]:
    return {**os.environ, "HF_HOME": str(tmp / "hf"), "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", "OPENAI_API_KEY": "none", "INSPECT_DISPLAY": "none",
            "INSPECT_LOG_FORMAT": "json", "INSPECT_LOG_DIR": str(tmp / "inspect-logs"),
            "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}


def test_inspect_runs_from_the_hub_cache_snapshot(harness_release, cached, server, tmp_path):
    _, release, _ = harness_release
    snapshot, cache, rows = cached
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    command = _fill(_readme_line(release, "inspect eval "), release=snapshot, url=f"{server.url}/v1")
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=elsewhere,
                          env=_env(tmp_path, cache), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    log = json.loads(next((tmp_path / "inspect-logs").glob("*.json")).read_text(encoding="utf-8"))
    per_item = {str(s["id"]): s["scores"]["benchsmith_score"]["value"] == "C" for s in log["samples"]}
    assert per_item == _expected_scores(release, rows)  # every row scored, each as benchsmith scores it


def test_lm_eval_runs_from_the_readme_copy_of_the_snapshot(harness_release, cached, server, tmp_path):
    _, release, _ = harness_release
    snapshot, cache, rows = cached
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    copy = tmp_path / "release"
    env = _env(tmp_path, cache)
    workaround = _fill(_readme_line(release, "cp -rL "), release=copy, url="")
    done = subprocess.run(["bash", "-c", workaround], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not any(path.is_symlink() for path in copy.rglob("*"))
    task = task_name("parity-exam", "full")
    command = _fill(_readme_line(release, "lm_eval "), release=copy, url=f"{server.url}/v1")
    assert f"--tasks {task} " in f"{command} "  # the README's command runs the full config alone
    done = subprocess.run(["bash", "-c", f"{command} --output_path {tmp_path / 'out'} --log_samples"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    samples = [json.loads(line) for line in next((tmp_path / "out").rglob(f"samples_{task}_*.jsonl"))
               .read_text(encoding="utf-8").splitlines()]
    assert {sample["doc"]["id"]: sample["acc"] == 1.0 for sample in samples} == _expected_scores(release, rows)
