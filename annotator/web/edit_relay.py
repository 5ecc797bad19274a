"""Text that arrives without a key press still counts as an edit, injected into the page head.

Gradio's textbox sends its `input` event only on `keypress`, so an IME commit (Hangul),
a paste from the menu, autocomplete, Backspace or `insert_text` changed the box but not the
preview or the server-side draft until the field lost focus. This script watches the native
`input` and `compositionend` events of the review fields and, when no key press came first,
nudges the textbox with a synthetic `keypress` (one per field per tick) so Gradio sends the
edit at once. When the page goes away (reload, closed tab) the edits of the past seconds
that no render has settled since (save, reload, another item) are also posted to `/bs/draft`
with `fetch(keepalive)`, so a reload right after typing keeps the text even if Gradio's
round trip had not finished (a text field's; the key editor's controls are only nudged).
"""

from __future__ import annotations

import json

SCRIPT = """
<script>
(() => {
  if (window.__bsEditRelay) return;
  window.__bsEditRelay = true;
  const FIELDS = %FIELDS%;
  const RECENT_MS = 5000;
  const keyed = new WeakSet();
  const scheduled = new WeakSet();
  const recent = new Map();
  let nudging = false;
  const fieldId = (el) => {
    for (let node = el; node; node = node.parentElement) if (node.id && FIELDS[node.id]) return node.id;
    return null;
  };
  const remember = (el, id) => {
    if (!FIELDS[id][1]) return;  // a control of a field made of several (the key editor): nudged only
    const stamp = document.querySelector("#" + FIELDS[id][0] + "-status .bs-rev");
    if (!stamp) return;
    recent.set(id, {queue: FIELDS[id][0], path: FIELDS[id][1], item_id: stamp.dataset.item,
                    rev: Number(stamp.dataset.rev), value: el.value, at: Date.now(), shown: stamp.dataset.shown});
  };
  const nudge = (el) => {
    if (scheduled.has(el)) return;
    scheduled.add(el);
    setTimeout(() => {
      scheduled.delete(el);
      nudging = true;
      try { el.dispatchEvent(new KeyboardEvent("keypress", {key: "Unidentified", bubbles: true})); }
      finally { nudging = false; }
    }, 0);
  };
  document.addEventListener("keypress", (event) => { if (!nudging) keyed.add(event.target); }, true);
  document.addEventListener("input", (event) => {
    const el = event.target, id = fieldId(el);
    if (!id || !("value" in el)) return;
    remember(el, id);
    if (keyed.has(el)) { keyed.delete(el); return; }  // Gradio saw the key press itself
    if (!event.isComposing) nudge(el);
  }, true);
  document.addEventListener("compositionend", (event) => {
    const el = event.target, id = fieldId(el);
    if (!id || !("value" in el)) return;
    remember(el, id);
    nudge(el);
  }, true);
  window.addEventListener("pagehide", () => {
    const now = Date.now();
    for (const edit of recent.values()) {
      if (now - edit.at > RECENT_MS || !edit.item_id) continue;
      // a render since the edit (save, reload, another item) settled it: sending it would bring it back
      const stamp = document.querySelector("#" + edit.queue + "-status .bs-rev");
      if (!stamp || stamp.dataset.shown !== edit.shown) continue;
      const {shown, at, ...body} = edit;
      fetch("%DRAFT_URL%", {method: "POST", keepalive: true, credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-Benchsmith": "1"}, body: JSON.stringify(body)});
    }
  });
})();
</script>
"""

DRAFT_URL = "/bs/draft"


def edit_relay_script(fields: dict[str, tuple[str, str]]) -> str:
    """`fields`: element id of a review textbox → (queue, dotted field path); a path "" for a control
    of a field made of several controls (the key editor), which is nudged but not posted on unload."""
    return SCRIPT.replace("%FIELDS%", json.dumps(fields)).replace("%DRAFT_URL%", DRAFT_URL)
