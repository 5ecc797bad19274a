"""Shared fixtures: temporary workspaces, the real-data folder, store URLs (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def realdata_dir() -> Path | None:
    """`../shared/realdata` beside the repository (absent in an outside user's checkout)."""
    for candidate in (REPO.parent / "shared" / "realdata", Path("/work/shared/realdata")):
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture
def realdata() -> Path:
    found = realdata_dir()
    if found is None:
        pytest.skip("../shared/realdata is not present")
    return found


@pytest.fixture
def workspace(tmp_path):
    from curation.core.workspace import init_workspace

    return init_workspace(tmp_path / "ws")


def _postgres_database() -> str:
    """A fresh database on the server named by BENCHSMITH_TEST_PG_URL; dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin_url = os.environ.get("BENCHSMITH_TEST_PG_URL")
    if not admin_url:
        pytest.skip("BENCHSMITH_TEST_PG_URL is not set (PostgreSQL tests run in CI)")
    name = f"bs_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False), admin_url, name


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    url, admin_url, name = _postgres_database()
    yield url
    from sqlalchemy import create_engine, text

    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real `benchsmith` entry point in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "benchsmith.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="session")
def sample_exam_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The canonical sample exam, its interleaved-stream twin and its scanned twin, written once."""
    from curation.sample_exam import write_sample_exam

    folder = tmp_path_factory.mktemp("sample-exam")
    write_sample_exam(folder / "sample.pdf")
    write_sample_exam(folder / "interleaved.pdf", interleave_columns=True)
    return folder


@pytest.fixture(scope="session")
def harness_release(tmp_path_factory: pytest.TempPathFactory):
    """(workspace, release folder copied away from its workspace, counts per config): the sample
    exam, multi-answer items, open-answer items (numeric, set, text; tests/release_support.py
    OPEN_ITEMS) and, when present, real KMMLU and 한국사 items."""
    import shutil

    from curation.core.workspace import init_workspace
    from export.build import build_release
    from export.release_config import ReleaseConfig
    from tests.release_support import add_multi_answer, add_open_items, add_realdata, add_sample_exam

    root = tmp_path_factory.mktemp("harness-release")
    workspace = init_workspace(root / "ws")
    add_sample_exam(workspace, root / "exam")
    add_multi_answer(workspace)
    add_open_items(workspace)
    if realdata_dir() is not None:
        add_realdata(workspace, realdata_dir())
    result = build_release(workspace, "1.0.0", ReleaseConfig(name="parity-exam"))
    moved = Path(shutil.copytree(result.path, root / "elsewhere" / "parity-exam-v1.0.0"))
    return workspace, moved, result.counts


def package_index_url() -> str:
    """The index pip installs from: PIP_INDEX_URL, pip's configured index-url, or PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    configured = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                                capture_output=True, text=True, timeout=60)
    return configured.stdout.strip() if configured.returncode == 0 and configured.stdout.strip() \
        else "https://pypi.org/simple/"


def index_unreachable(index_url: str, package: str) -> str | None:
    """Why the package index cannot be reached (no route, no name, no answer), or None when it answers."""
    import httpx

    if index_url.startswith("file://"):
        return None if Path(index_url[len("file://"):]).is_dir() else f"{index_url} is not a folder"
    try:
        httpx.get(f"{index_url.rstrip('/')}/{package}/", timeout=15, follow_redirects=True)
    except httpx.TransportError as error:
        return f"{type(error).__name__}: {error}"
    return None


@pytest.fixture(scope="session")
def legacy_datasets_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a second virtual environment with `datasets` 3.6 (what lm_eval 0.4.9 pins),
    created once per session from the package index. Skipped only when the index cannot be
    reached; a venv or pip failure with the index reachable fails the test."""
    index_url = package_index_url()
    unreachable = index_unreachable(index_url, "datasets")
    if unreachable:
        pytest.skip(f"the package index {index_url} is unreachable ({unreachable}): no datasets 3.6 environment")
    folder = tmp_path_factory.mktemp("datasets-3.6") / "venv"
    steps = ([sys.executable, "-m", "venv", str(folder)],
             [str(folder / "bin" / "pip"), "install", "-q", "datasets==3.6.0", "pillow"])
    for command in steps:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(command)} did not finish in 900 s with {index_url} reachable")
        if done.returncode != 0:
            pytest.fail(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return folder / "bin" / "python"
