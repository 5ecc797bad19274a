"""Keyboard shortcuts, injected into the page head.

Bound to `event.code` (the physical key), so they work the same under a Korean keyboard
layout, and ignored while an IME composition is active (`isComposing`, keyCode 229), so
typing Hangul never triggers one. In a text field they need Alt; elsewhere the bare key:
A accept/confirm/adopt, R reject/deny, N next, P previous, S save, 1–5 the next unset score.
`?` (Shift+/) opens an overlay listing them; Esc closes it.
"""

import html

HELP: tuple[tuple[str, str], ...] = (
    ("A", "승인 · 맞음 · 채택 — accept / confirm / adopt"),
    ("R", "반려 · 아님 — reject / deny"),
    ("N", "다음 — next item"),
    ("P", "이전 — previous item"),
    ("S", "저장 — save"),
    ("1 – 5", "채점: 다음 빈 축 — score the next unset axis"),
    ("Alt + key", "글 상자 안에서 — the same inside a text field"),
    ("?", "이 도움말 — this help (Esc closes)"),
)

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
  const toggleHelp = (show) => {
    let overlay = document.getElementById("bs-help");
    if (!overlay) {
      overlay = document.createElement("div");
      overlay.id = "bs-help";
      overlay.setAttribute("role", "dialog");
      overlay.setAttribute("aria-label", "keyboard shortcuts");
      overlay.innerHTML = %HELP%;
      overlay.addEventListener("click", () => toggleHelp(false));
      document.body.appendChild(overlay);
    }
    const open = show ?? overlay.dataset.open !== "1";
    overlay.dataset.open = open ? "1" : "0";
    overlay.style.display = open ? "flex" : "none";
  };
  document.addEventListener("keydown", (event) => {
    if (event.isComposing || event.keyCode === 229) return;  // IME composition: Korean input in progress
    if (event.key === "Escape" && document.getElementById("bs-help")) { toggleHelp(false); return; }
    if (event.code === "Slash" && event.shiftKey && !isTextField(event.target)) {
      toggleHelp(); event.preventDefault(); return;
    }
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

    rows = "".join(f"<tr><td><kbd>{html.escape(key)}</kbd></td><td>{html.escape(what)}</td></tr>" for key, what in HELP)
    overlay = ('<div class="bs-help-box"><h3>단축키 · Keyboard shortcuts</h3><table>' + rows
               + "</table><p>IME(한글) 조합 중에는 동작하지 않습니다 · inactive while composing Hangul</p></div>")
    return SCRIPT.replace("%ACTIONS%", json.dumps(ACTIONS)).replace("%HELP%", json.dumps(overlay))
