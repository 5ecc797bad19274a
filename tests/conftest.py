"""Shared fixtures: temporary workspaces, the real-data folder, the CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
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
    from curation.workspace import init_workspace

    return init_workspace(tmp_path / "ws")


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the real `benchsmith` entry point in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run(
        [sys.executable, "-m", "benchsmith.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )
