"""How much work the server takes on at once, and the store connections that work needs.

Gradio runs every event handler, and FastAPI every plain route, in anyio's worker threads
(anyio's default limiter: 40 at once). Each may hold a store connection while it runs, and the
event loop's own thread uses one too (the gate, the draft relay), so the store keeps one
connection per thread plus that one. With SQLAlchemy's default pool (5 kept, 10 more opened
and closed per use) a team's load opened about one PostgreSQL connection per action.
"""

from __future__ import annotations

WORKER_THREADS = 40  # anyio's default, set explicitly so that the pool below matches it


def pool_size(threads: int = WORKER_THREADS) -> int:
    return threads + 1  # the event loop's thread


def limit_worker_threads(threads: int = WORKER_THREADS) -> None:
    """Called in the running server's event loop: anyio's limiter belongs to the loop."""
    import anyio.to_thread

    anyio.to_thread.current_default_thread_limiter().total_tokens = threads


MALLOC_ARENAS = 2
ARENA_ENV = "MALLOC_ARENA_MAX"  # glibc's documented setting, read when the process starts
M_ARENA_MAX = -8  # <malloc.h>


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> str:
    """glibc gives each of up to 8 × cores threads a malloc arena of its own; with 40 worker
    threads the server's memory grew by each arena's high-water mark, kept after the work was
    done. A couple of arenas serve threads that mostly wait on the store and the GIL.

    `MALLOC_ARENA_MAX` in the server's environment is the documented route and wins: glibc read it
    when the process started, and nothing is changed here. Without it, glibc's `mallopt` sets the
    same limit (called before the worker threads start), and a refusal stops the server with a
    clear message rather than leaving the limit silently unset. Returns what limits the arenas."""
    import ctypes
    import ctypes.util
    import os

    from curation.core.errors import BenchsmithError

    chosen = os.environ.get(ARENA_ENV)
    if chosen is not None:
        if not chosen.strip().isdigit() or int(chosen) < 1:
            raise BenchsmithError(f"{ARENA_ENV}={chosen!r}: 양의 정수여야 합니다 (must be a positive whole number)")
        return f"{ARENA_ENV}={int(chosen)} (the environment)"
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        libc = None
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return "not glibc: the C library's own arenas"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if mallopt(M_ARENA_MAX, arenas) != 1:
        raise BenchsmithError(f"glibc의 mallopt(M_ARENA_MAX, {arenas})가 거부되었습니다 (glibc refused "
                              f"mallopt(M_ARENA_MAX, {arenas})): set {ARENA_ENV}={arenas} in the environment instead")
    return f"mallopt(M_ARENA_MAX, {arenas})"
