"""Click → visible result, timed inside the page.

Timing a click from Python (`click()` then `expect(...)`) adds Playwright's own costs: the click's
actionability checks, and expect's polling, which checks at 0, 20, 70, 170 and 270 ms and then
only every 500 ms: a page that shows its result 290 ms after the click was read as ~770 ms. Here
the page itself records the click's event time and the frame after the watched element changed
(a MutationObserver, then requestAnimationFrame: the frame that paints it); Python still waits
for the result with `expect` and then reads the two times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INSTALL = """() => {
  if (window.__bsClock) return;
  const clock = window.__bsClock = {selector: null, attr: null, before: null, clickAt: null, shownAt: null};
  const read = () => {
    const node = clock.selector && document.querySelector(clock.selector);
    return node ? (clock.attr ? node.getAttribute(clock.attr) : node.textContent) : null;
  };
  clock.read = read;
  document.addEventListener('click', (event) => {
    if (clock.selector !== null && clock.clickAt === null) clock.clickAt = event.timeStamp;
  }, true);
  new MutationObserver(() => {
    if (clock.clickAt === null || clock.shownAt !== null || clock.pending) return;
    const now = read();  // an element being redrawn (absent a moment) is not the result
    if (now === null || now === clock.before) return;
    clock.pending = true;
    requestAnimationFrame(() => { clock.shownAt = performance.now(); clock.pending = false; });
  }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""

ARM = """([selector, attr]) => {
  const clock = window.__bsClock;
  Object.assign(clock, {selector, attr, clickAt: null, shownAt: null, pending: false});
  clock.before = clock.read();
}"""

ELAPSED = """() => {
  const clock = window.__bsClock;
  const elapsed = clock.shownAt === null || clock.clickAt === null ? null : clock.shownAt - clock.clickAt;
  clock.selector = null;
  return elapsed;
}"""


def install(page: Any) -> None:
    """Once per loaded page (after login: the app is a new document)."""
    page.evaluate(INSTALL)


def timed_click(page: Any, samples: list[float], button: Any, done: Callable[[], None], watch: str,
                attr: str | None = "data-shown") -> None:
    """Click `button`, wait for `done`, and append the seconds from the click to the frame that
    painted the first change of `watch` (its `attr`, or its text when None)."""
    page.evaluate(ARM, [watch, attr])
    button.click()
    done()
    elapsed = page.evaluate(ELAPSED)
    if elapsed is None:
        raise RuntimeError(f"the page recorded no click and change of {watch}")
    samples.append(elapsed / 1000)
