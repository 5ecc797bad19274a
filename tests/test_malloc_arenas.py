"""The server's malloc arena limit: `MALLOC_ARENA_MAX` in the environment (glibc's documented
setting) wins and is left alone; without it glibc's `mallopt` sets the limit and its answer is
checked; a bad value is a clear error. Each case in a process of its own (the setting is per
process)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CALL = ("from annotator.web.capacity import limit_malloc_arenas\n"
        "from curation.core.errors import BenchsmithError\n"
        "try:\n    print(limit_malloc_arenas())\nexcept BenchsmithError as error:\n    print('error:', error)\n")


def _limit(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, "-c", CALL], capture_output=True, text=True, cwd=ROOT,
                          env={**clean, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_environment_setting_wins_and_a_bad_one_is_a_clear_error():
    assert _limit(MALLOC_ARENA_MAX="3") == "MALLOC_ARENA_MAX=3 (the environment)"
    assert _limit(MALLOC_ARENA_MAX="many").startswith("error: MALLOC_ARENA_MAX='many'")
    assert "must be a positive whole number" in _limit(MALLOC_ARENA_MAX="0")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt's arena limit is glibc's")
def test_without_the_environment_glibc_accepts_the_limit():
    assert _limit() == "mallopt(M_ARENA_MAX, 2)"
