"""The source page view: zoom (wheel, buttons), pan (drag with Shift or the middle button, or
in pan mode; scroll bars) and a box drawn by dragging, injected into the page head.

views.page_html marks the page `.bs-page` with its size in PDF points (`data-pdf-width`,
`data-pdf-height`) and the ids of the number fields a drawn box fills (`data-box-fields`:
PREFIX-x0 … PREFIX-y1). The page image fills `.bs-page`, whose width is the zoom times the
column's width (a CSS variable on the Gradio HTML block, so the zoom stays from item to item).
A point under the pointer is therefore at (clientX − left) / width × pdf-width points, whatever
the zoom or the PNG's pixel size: the drawn box is written to the fields in PDF points (two
decimals), where it can still be typed, and Re-crop applies it.
"""

from __future__ import annotations

MIN_ZOOM = 1.0  # the column's width: the whole page width in view
MAX_ZOOM = 6.0
STEP = 1.25

SCRIPT = """
<script>
(() => {
  if (window.__bsPageView) return;
  window.__bsPageView = true;
  const MIN = %MIN%, MAX = %MAX%, STEP = %STEP%;
  const hostOf = (el) => el.closest(".bs-page-host");
  const zoomOf = (host) => Number(host.dataset.bsZoom || 1);
  const setZoom = (view, zoom, clientX, clientY) => {
    const host = hostOf(view), page = view.querySelector(".bs-page");
    if (!host || !page) return;
    zoom = Math.min(MAX, Math.max(MIN, zoom));
    const before = page.getBoundingClientRect(), box = view.getBoundingClientRect();
    const ax = clientX ?? box.left + view.clientWidth / 2, ay = clientY ?? box.top + view.clientHeight / 2;
    const fx = (ax - before.left) / before.width, fy = (ay - before.top) / before.height;
    host.dataset.bsZoom = String(zoom);
    host.style.setProperty("--bs-zoom", String(zoom));
    host.style.setProperty("--bs-zoom-label", '"' + Math.round(zoom * 100) + '%"');
    const after = page.getBoundingClientRect();
    // keep the point under the pointer (or the view's centre) where it was
    view.scrollLeft += (after.left + fx * after.width) - ax;
    view.scrollTop += (after.top + fy * after.height) - ay;
  };
  const toPoints = (page, clientX, clientY) => {
    const r = page.getBoundingClientRect();
    const w = Number(page.dataset.pdfWidth), h = Number(page.dataset.pdfHeight);
    const clamp = (v, hi) => Math.min(hi, Math.max(0, v));
    return [clamp((clientX - r.left) / r.width * w, w), clamp((clientY - r.top) / r.height * h, h)];
  };
  const setField = (id, value) => {
    const input = document.querySelector("#" + id + " input");
    if (!input) return;
    input.value = String(value);
    input.dispatchEvent(new Event("input", {bubbles: true}));
    input.dispatchEvent(new Event("change", {bubbles: true}));
  };
  document.addEventListener("click", (event) => {
    const button = event.target.closest(".bs-page-tools button");
    if (!button) return;
    const view = button.closest(".bs-page-frame").querySelector(".bs-page-view");
    const zoom = zoomOf(hostOf(view));
    if (button.classList.contains("bs-zoom-in")) setZoom(view, zoom * STEP);
    else if (button.classList.contains("bs-zoom-out")) setZoom(view, zoom / STEP);
    else if (button.classList.contains("bs-zoom-fit")) setZoom(view, 1);
  });
  document.addEventListener("wheel", (event) => {
    const view = event.target.closest && event.target.closest(".bs-page-view");
    if (!view) return;
    event.preventDefault();
    const zoom = zoomOf(hostOf(view));
    setZoom(view, zoom * Math.pow(STEP, -Math.sign(event.deltaY)), event.clientX, event.clientY);
  }, {passive: false, capture: true});
  let drag = null;
  document.addEventListener("pointerdown", (event) => {
    const page = event.target.closest && event.target.closest(".bs-page[data-pdf-width]");
    if (!page) return;
    const view = page.closest(".bs-page-view"), frame = page.closest(".bs-page-frame");
    const panning = event.button === 1 || event.shiftKey || frame.querySelector(".bs-pan-mode")?.checked;
    if (event.button !== 0 && event.button !== 1) return;
    event.preventDefault();
    page.setPointerCapture(event.pointerId);
    if (panning) {
      drag = {pan: true, page, view, x: event.clientX, y: event.clientY, left: view.scrollLeft, top: view.scrollTop};
      return;
    }
    page.querySelector(".bs-draw-box")?.remove();
    const shape = document.createElement("div");
    shape.className = "bs-box bs-draw-box";
    page.appendChild(shape);
    drag = {pan: false, page, shape, start: toPoints(page, event.clientX, event.clientY)};
  }, true);
  const boxOf = (d, event) => {
    const [ax, ay] = d.start, [bx, by] = toPoints(d.page, event.clientX, event.clientY);
    return [Math.min(ax, bx), Math.min(ay, by), Math.max(ax, bx), Math.max(ay, by)];
  };
  const place = (d, box) => {
    const w = Number(d.page.dataset.pdfWidth), h = Number(d.page.dataset.pdfHeight);
    Object.assign(d.shape.style, {left: 100 * box[0] / w + "%", top: 100 * box[1] / h + "%",
                                  width: 100 * (box[2] - box[0]) / w + "%", height: 100 * (box[3] - box[1]) / h + "%"});
  };
  document.addEventListener("pointermove", (event) => {
    if (!drag) return;
    if (drag.pan) {
      drag.view.scrollLeft = drag.left - (event.clientX - drag.x);
      drag.view.scrollTop = drag.top - (event.clientY - drag.y);
    } else {
      place(drag, boxOf(drag, event));
    }
  }, true);
  const finish = (event) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (d.pan) return;
    const box = boxOf(d, event).map((v) => Math.round(v * 100) / 100);
    if (box[2] - box[0] < 1 || box[3] - box[1] < 1) { d.shape.remove(); return; }  // a click, not a box
    place(d, box);
    const prefix = d.page.dataset.boxFields;
    ["x0", "y0", "x1", "y1"].forEach((name, i) => setField(prefix + "-" + name, box[i]));
    d.page.dataset.drawn = JSON.stringify(box);
    const note = d.page.closest(".bs-page-frame").querySelector(".bs-draw-note");
    if (note) note.textContent = "그린 상자 · Drawn box [" + box.join(", ") + "] pt — 다시 자르기로 적용 · Re-crop applies it";
  };
  // a new page on screen: when the item's box lies below the view's fold, scroll the view (not the
  // window) to it, so that the crop is seen beside the form without scrolling the page
  const placeItem = () => document.querySelectorAll(".bs-page-view:not([data-bs-placed])").forEach((view) => {
    const box = view.querySelector(".bs-item-box");
    if (!box || !view.clientHeight) return;
    view.dataset.bsPlaced = "1";
    if (box.offsetTop + box.offsetHeight > view.scrollTop + view.clientHeight) view.scrollTop = Math.max(0, box.offsetTop - 24);
  });
  new MutationObserver(placeItem).observe(document.documentElement, {childList: true, subtree: true});
  document.addEventListener("pointerup", finish, true);
  document.addEventListener("pointercancel", () => { if (drag && !drag.pan) drag.shape.remove(); drag = null; }, true);
})();
</script>
"""


def page_view_script() -> str:
    return SCRIPT.replace("%MIN%", str(MIN_ZOOM)).replace("%MAX%", str(MAX_ZOOM)).replace("%STEP%", str(STEP))
