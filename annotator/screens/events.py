"""How the app's event listeners are wired, for speed in the browser.

Two costs in Gradio 6's front end grow with the page rather than with the work:

- The queue: a queued event is a POST to /queue/join plus an SSE stream opened for it; an
  event with `queue=False` is one POST to /run/predict. Our handlers are short database
  calls, so the queue buys nothing.
- Loading status: every component that ever was a progress target (by default every output
  of every event that ran, the ~100 outputs of the page load included) gets its loading
  status rewritten on each status change of each event, each one found by a walk of the
  whole component tree, layout blocks with a snapshot of all their children. Naming one
  small component as the progress target keeps that to one update.

Measured on 50,000 items (benchmarks/annotator_browser_bench.py): page JavaScript per "Next"
fell from ~250 ms to ~40 ms.
"""

from __future__ import annotations

from typing import Any


def fast(progress_on: Any) -> dict[str, Any]:
    """Keyword arguments for an event listener: no queue, no spinner, one progress target."""
    return {"queue": False, "show_progress": "hidden", "show_progress_on": progress_on}
