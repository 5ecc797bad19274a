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


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> None:
    """glibc gives each of up to 8 × cores threads a malloc arena of its own; with 40 worker
    threads the server's memory grew by each arena's high-water mark, kept after the work was
    done. A couple of arenas serve threads that mostly wait on the store and the GIL. Called
    before the worker threads start; nothing to do where the C library is not glibc."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt(-8, arenas)  # M_ARENA_MAX
