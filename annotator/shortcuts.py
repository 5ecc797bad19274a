"""Keyboard shortcuts, injected into the page head.

Bound to `event.code` (the physical key), so they work the same under a Korean keyboard
layout, and ignored while an IME composition is active (`isComposing`, keyCode 229), so
typing Hangul never triggers one. In a text field they need Alt; elsewhere the bare key:
A accept/confirm/adopt, R reject/deny, N next, P previous, S save, 1–5 the next unset score.
"""

ACTIONS: dict[str, str] = {
    "KeyA": "bs-accept",
    "KeyR": "bs-reject",
    "KeyN": "bs-next",
    "KeyP": "bs-prev",
    "KeyS": "bs-save",
}

SCRIPT = """
<script>
(() => {
  if (window.__bsShortcuts) return;
  window.__bsShortcuts = true;
  const ACTIONS = %ACTIONS%;
  const isTextField = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));
  const shown = (el) => el.offsetParent !== null;
  const clickShown = (cls) => {
    const target = [...document.querySelectorAll("." + cls)].find(shown);
    const button = target && (target.tagName === "BUTTON" ? target : target.querySelector("button"));
    if (button && !button.disabled) { button.click(); return true; }
    return false;
  };
  const score = (digit) => {
    const open = [...document.querySelectorAll(".bs-axis")].filter(shown)
      .find((group) => !group.querySelector("input[type=radio]:checked"));
    const input = open && [...open.querySelectorAll("input[type=radio]")].find((i) => i.value === digit);
    if (input) { input.click(); return true; }
    return false;
  };
  document.addEventListener("keydown", (event) => {
    if (event.isComposing || event.keyCode === 229) return;  // IME composition: Korean input in progress
    if (event.ctrlKey || event.metaKey || event.repeat) return;
    if (isTextField(event.target) !== event.altKey) return;  // in a text field only with Alt
    const digit = /^(?:Digit|Numpad)([1-5])$/.exec(event.code);
    const done = digit ? score(digit[1]) : (ACTIONS[event.code] ? clickShown(ACTIONS[event.code]) : false);
    if (done) { event.preventDefault(); event.stopPropagation(); }
  }, true);
})();
</script>
"""


def head_script() -> str:
    import json

    return SCRIPT.replace("%ACTIONS%", json.dumps(ACTIONS))
