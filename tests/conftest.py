"""Shared test helpers: where the real exam material lives (skip cleanly when it is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
_REALDATA_CANDIDATES = (REPO_ROOT / ".." / "shared" / "realdata", REPO_ROOT.parent / "shared" / "realdata",
                        Path("/work/shared/realdata"))


def realdata_dir() -> Path | None:
    """`../shared/realdata` next to the repository root (CI clone), else the shared checkout's copy."""
    for candidate in _REALDATA_CANDIDATES:
        if candidate.is_dir():
            return candidate.resolve()
    return None


@pytest.fixture
def realdata() -> Path:
    found = realdata_dir()
    if found is None:
        pytest.skip("../shared/realdata is not here")
    return found


@pytest.fixture(scope="session")
def sample_exam_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The canonical sample exam, its interleaved-stream twin and its scanned twin, written once."""
    from curation.sample_exam import write_sample_exam

    folder = tmp_path_factory.mktemp("sample-exam")
    write_sample_exam(folder / "sample.pdf")
    write_sample_exam(folder / "interleaved.pdf", interleave_columns=True)
    return folder
