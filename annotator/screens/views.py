"""HTML fragments for the app. Every piece of item text passes through `esc` (html.escape),
so OCR text such as `<script>` or `<img onerror=…>` shows as text, never as markup."""

from __future__ import annotations

import json
import time
from html import escape
from typing import Any

from annotator.review import key_form
from annotator.review.actions import Conflict, View, key_options
from annotator.review.render import PageInfo
from curation.core.store import Revision

BLOB_URL = "/bs/blob/{ref}"
PAGE_URL = "/bs/page/{sha}/{page}"


def esc(value: Any) -> str:
    return escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), quote=True)


def key_numbers(answer: Any) -> set[int]:
    """The key's option numbers from a stored answer (a choice key; 3, [1, 3] in schema 1) or one
    being edited ("1,3"); none for a key of another format."""
    if isinstance(answer, dict):
        answer = key_options(answer) or []
    values = answer if isinstance(answer, list) else str(answer if answer is not None else "").split(",")
    return {int(v) for v in (str(value).strip() for value in values) if v.isdigit()}


def _box_style(bbox: list[float], info: PageInfo) -> str:
    x0, y0, x1, y1 = bbox
    return (f"left:{100 * x0 / info.width:.3f}%;top:{100 * y0 / info.height:.3f}%;"
            f"width:{100 * (x1 - x0) / info.width:.3f}%;height:{100 * (y1 - y0) / info.height:.3f}%")


def image_slots(record: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(field path, label, image) for the question's images and the option images."""
    slots = [(f"images.{n}", f"문제 그림 {n} · Question image {n}", image)
             for n, image in enumerate(record.get("images") or [], start=1)]
    slots += [(f"options.{n}.image", f"보기 {n} 그림 · Option {n} image", option["image"])
              for n, option in enumerate(record.get("options") or [], start=1) if option.get("image")]
    return slots


def page_html(record: dict[str, Any], info: PageInfo | None, box_fields: str = "") -> str:
    """The source page with the item's and the crops' boxes, in a zoomable view (page_view.py);
    `box_fields`: the id prefix of the number fields a box drawn on it fills."""
    source = record.get("source") or {}
    sha, page, bbox = source.get("pdf_sha256"), source.get("page"), source.get("bbox")
    if info is None or not sha or not page:
        return '<div class="bs-note">원본 PDF 페이지 없음 · No source PDF page for this item</div>'
    boxes = []
    if bbox:
        boxes.append(f'<div class="bs-box bs-item-box" title="item box" style="{_box_style(bbox, info)}"></div>')
    for _, label, image in image_slots(record):
        where = image.get("provenance") or {}
        if where.get("bbox") and where.get("page", page) == page and where.get("pdf_sha256", sha) == sha:
            boxes.append(f'<div class="bs-box bs-crop-box" title="{esc(label)}" style="{_box_style(where["bbox"], info)}"></div>')
    tools = ('<div class="bs-page-tools"><button type="button" class="bs-zoom-out" title="축소 · Zoom out">−</button>'
             '<span class="bs-zoom-level"></span>'
             '<button type="button" class="bs-zoom-in" title="확대 · Zoom in">+</button>'
             '<button type="button" class="bs-zoom-fit" title="폭 맞춤 · Fit the column">폭 맞춤 · Fit</button>'
             '<label><input type="checkbox" class="bs-pan-mode"> 이동 · Pan</label>'
             '<span class="bs-draw-note">끌어서 상자 그리기, Shift+끌기는 이동 · Drag to draw a box, '
             'Shift+drag or wheel-click drag to pan, wheel to zoom</span></div>')
    return (f'<div class="bs-page-frame"><div class="bs-page-caption">p.{int(page)} / {info.pages} · '
            f'PDF {esc(sha[:12])}… · box {esc(bbox)} · {info.width:g} × {info.height:g} pt</div>{tools}'
            f'<div class="bs-page-view"><div class="bs-page" data-pdf-width="{info.width!r}" '
            f'data-pdf-height="{info.height!r}" data-box-fields="{esc(box_fields)}" '
            f'style="aspect-ratio: {info.width!r} / {info.height!r}">'
            f'<img alt="page {int(page)}" draggable="false" src="{PAGE_URL.format(sha=esc(sha), page=int(page))}">'
            + "".join(boxes) + "</div></div></div>")


def crops_html(record: dict[str, Any]) -> str:
    slots = image_slots(record)
    if not slots:
        return '<div class="bs-note">그림 없음 · No images</div>'
    figures = []
    for path, label, image in slots:
        where = image.get("provenance") or {}
        provenance = (f"p.{esc(where.get('page'))} · box {esc(where.get('bbox'))} · PDF {esc((where.get('pdf_sha256') or '?')[:12])}…"
                      if where else "출처 없음 · no provenance")
        figures.append(
            f'<figure class="bs-crop" data-path="{esc(path)}"><img alt="{esc(image.get("alt") or label)}" '
            f'src="{BLOB_URL.format(ref=esc(image["blob"]))}"><figcaption><b>{esc(label)}</b> · {esc(image.get("kind"))}'
            f"<br>{provenance}<br><code>{esc(image['blob'][:16])}…</code></figcaption></figure>")
    return '<div class="bs-crops">' + "".join(figures) + "</div>"


def local_time(value: Any) -> str:
    """A stored time (UTC, ISO 8601) as a <time> the page shows in the reader's own time zone
    (LOCAL_TIME_SCRIPT); the UTC text stays the fallback and the title."""
    text = esc(value)
    return f'<time class="bs-time" datetime="{text}" title="{text} UTC">{text}</time>'


# rewrites each new <time class="bs-time"> into the browser's local time, once
LOCAL_TIME_SCRIPT = """
<script>
(() => {
  if (window.__bsLocalTime) return;
  window.__bsLocalTime = true;
  const local = () => document.querySelectorAll("time.bs-time:not([data-local])").forEach((t) => {
    const when = new Date(t.getAttribute("datetime"));
    t.dataset.local = "1";
    if (!isNaN(when)) t.textContent = when.toLocaleString("ko-KR", {dateStyle: "short", timeStyle: "medium"});
  });
  new MutationObserver(local).observe(document.documentElement, {childList: true, subtree: true});
})();
</script>
"""


def status_html(view: View) -> str:
    parts = []
    if view.stored is not None:
        session = view.session
        parts.append(
            f'<span class="bs-rev" data-rev="{session.rev}" data-item="{esc(session.item_id)}" '
            f'data-queue="{esc(session.queue)}" data-shown="{time.time_ns()}">'
            f"{esc(view.stored.item.id)} · rev {session.rev}"
            f" · {esc(view.stored.item.status)} · last by {esc(view.stored.updated_by)} ({local_time(view.stored.updated_at)})"
            "</span>")
    if view.message:
        parts.append(f'<div class="bs-message">{esc(view.message)}</div>')
    if view.reserved_by is not None:  # a warning, not a success: saving waits for them
        who = esc(view.reserved_by.user)
        parts.append(f'<div class="bs-warning" role="status">{who} 님이 수정 중입니다 ({esc(view.reserved_by.until)}) · '
                     f"{who} is editing this item: you can read it; saving waits until they save or leave it</div>")
    if view.error:
        parts.append(f'<div class="bs-error" role="alert">{esc(view.error)}</div>')
    return "".join(parts)


def progress_html(progress: Any) -> str:
    """Done / total for the queue, and the user's own share, as two progress bars."""
    def bar(label: str, done: int, total: int, css: str) -> str:
        return (f'<span class="{css}" data-done="{done}" data-total="{total}">{esc(label)} '
                f'<progress max="{max(total, 1)}" value="{done}"></progress> {done} / {total}</span>')

    parts = [bar("대기열 · Queue done", progress.done, progress.total, "bs-progress-queue")]
    if progress.assigned:
        parts.append(bar("내 배정 · Mine (assigned)", progress.assigned_done, progress.assigned, "bs-progress-mine"))
    else:
        parts.append(f'<span class="bs-progress-mine" data-done="{progress.mine}">내 결정 · Mine decided: {progress.mine}</span>')
    return '<div class="bs-progress">' + "".join(parts) + "</div>"


def draft_html(session: Any) -> str:
    edited = len(session.edits)
    if not edited:
        return ""
    return f'<span class="bs-draft">임시 저장됨 · <b>{edited} unsaved edit{"s" if edited != 1 else ""}</b> kept on the server</span>'


def conflict_html(conflict: Conflict | None) -> str:
    if conflict is None:
        return ""
    since = "".join(f"<li>{esc(line)}</li>" for line in conflict.since)
    rows = "".join(
        f"<tr><td><code>{esc(path)}</code></td><td>{esc(base)}</td><td>{esc(now)}</td><td>{esc(_typed(mine))}</td></tr>"
        for path, base, now, mine in conflict.fields)
    return (f'<div class="bs-conflict"><b>충돌 · Conflict</b>: {esc(conflict.message)}<ul>{since}</ul>'
            "<table><tr><th>field</th><th>your revision</th><th>now (theirs)</th><th>yours</th></tr>"
            f"{rows}</table></div>")


def _typed(value: Any) -> Any:
    """An edit as it will be saved: the key editor's form as the key it makes (else as typed)."""
    if key_form.is_form(value):
        try:
            return key_form.key_of(value)
        except key_form.KeyFormError:
            return {name: v for name, v in value.items() if v not in ("", None, False)}
    return value


def history_html(rows: list[tuple[Revision, list[tuple[str, Any, Any]]]]) -> str:
    body = []
    for revision, changes in reversed(rows):
        diff = "created" if revision.rev == 1 else "<br>".join(
            f"<code>{esc(path)}</code>: {esc(before)} → {esc(after)}" for path, before, after in changes) or "—"
        body.append(f'<tr class="bs-history-row" data-rev="{revision.rev}"><td>{revision.rev}</td>'
                    f"<td>{local_time(revision.created_at)}</td><td>{esc(revision.author)}</td><td>{esc(revision.stage)}</td>"
                    f"<td>{esc(revision.reason or '')}</td><td>{diff}</td></tr>")
    return ('<table class="bs-history"><tr><th>rev</th><th>time</th><th>author</th><th>stage</th><th>reason</th>'
            "<th>changes</th></tr>" + "".join(body) + "</table>")


def reasons_html(title: str, reasons: list[str]) -> str:
    if not reasons:
        return f'<div class="bs-note">{esc(title)}: —</div>'
    return f"<div><b>{esc(title)}</b><ul>" + "".join(f"<li>{esc(r)}</li>" for r in reasons) + "</ul></div>"


def table_html(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    if not rows:
        return '<div class="bs-note">아직 없음 · Nothing yet</div>'
    head = "".join(f"<th>{esc(title)}</th>" for _, title in columns)

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "—" if value != value else f"{value:.3f}"  # NaN → —
        return "—" if value is None else esc(str(value))

    body = "".join("<tr>" + "".join(f"<td>{cell(row.get(key))}</td>" for key, _ in columns) + "</tr>" for row in rows)
    return f'<table class="bs-table"><tr>{head}</tr>{body}</table>'


CSS = """
.bs-page-view { overflow: auto; max-height: max(320px, calc(100vh - 400px)); border: 1px solid #ccc; }
.bs-page { position: relative; display: block; width: calc(var(--bs-zoom, 1) * 100%); cursor: crosshair;
  touch-action: none; user-select: none; }
.bs-page img { width: 100%; height: 100%; display: block; -webkit-user-drag: none; }
.bs-page-tools { display: flex; gap: 6px; align-items: center; font-size: 12px; margin: 4px 0; flex-wrap: wrap; }
.bs-page-tools button { border: 1px solid #999; border-radius: 4px; padding: 0 8px; background: #f3f4f6; color: #111; }
.bs-zoom-level::after { content: var(--bs-zoom-label, "100%"); }
.bs-draw-note { color: #6b7280; }
.bs-box { position: absolute; pointer-events: none; }
.bs-draw-box { border: 2px solid #16a34a; background: rgba(22, 163, 74, 0.12); }
.bs-field { gap: 2px !important; }
.bs-field .bs-preview { display: none !important; }
.bs-field .bs-preview:has(.katex), .bs-previews-all .bs-field .bs-preview { display: block !important; }
.bs-key-field { outline: 3px solid #16a34a; outline-offset: 2px; border-radius: 6px; }
.bs-key { background: #dcfce7; outline: 2px solid #16a34a; border-radius: 4px; font-weight: 600; }
.bs-key-editor { border: 2px solid #16a34a !important; border-radius: 8px; }
.bs-key-line { padding: 4px 8px; }
.bs-key-badge { padding: 1px 6px; margin-right: 4px; }
.bs-key-text { background: #dcfce7; border-radius: 4px; padding: 1px 4px; }
.bs-item-box { border: 3px solid #e11d48; background: rgba(225, 29, 72, 0.08); }
.bs-crop-box { border: 2px dashed #2563eb; }
.bs-crops { display: flex; flex-wrap: wrap; gap: 8px; }
.bs-crop { margin: 0; max-width: 240px; border: 1px solid #ddd; padding: 4px; font-size: 12px; }
.bs-crop img { max-width: 100%; max-height: 160px; }
.bs-error { color: #b91c1c; font-weight: 600; }
.bs-message { color: #166534; }
.bs-warning { color: #92400e; background: #fffbeb; border-left: 3px solid #d97706; padding: 2px 6px; }
.bs-conflict { border: 2px solid #b45309; padding: 8px; background: #fffbeb; }
.bs-conflict table, .bs-history, .bs-table { border-collapse: collapse; font-size: 13px; }
.bs-conflict td, .bs-conflict th, .bs-history td, .bs-history th, .bs-table td, .bs-table th {
  border: 1px solid #ddd; padding: 2px 6px; vertical-align: top; }
.bs-preview { min-height: 1.5em; border-left: 3px solid #a5b4fc; padding-left: 6px; }
.bs-note { color: #6b7280; }
#bs-help { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.45); z-index: 1000; display: flex;
  align-items: center; justify-content: center; }
.bs-help-box { background: #fff; color: #111; padding: 16px 24px; border-radius: 8px; max-width: 560px; }
.bs-help-box td { padding: 3px 10px; }
.bs-help-box kbd { border: 1px solid #999; border-radius: 3px; padding: 1px 6px; background: #f3f4f6; }
.bs-progress { display: flex; gap: 16px; align-items: center; font-size: 13px; }
.bs-progress progress { width: 160px; }
.bs-response { border: 1px solid #d1d5db; border-radius: 6px; padding: 6px; }
/* a 1366x768 laptop: who and the logout in the navbar's line, one line of moves, closed bars, the item
   right below; the decisions stay on screen at the foot of the form column */
/* Gradio's container hides overflow, which would stop the sticky action bar; clip only sideways */
.gradio-container { overflow-x: clip !important; overflow-y: visible !important; }
#bs-header { position: absolute; top: -46px; left: 0; width: auto !important; max-width: 60vw; z-index: 50;
  flex-wrap: nowrap !important; align-items: center; gap: 12px !important; }
#bs-header #whoami { width: auto !important; min-width: max-content !important; white-space: nowrap; }
.bs-navrow { gap: 6px !important; align-items: center; }
.bs-bars { gap: 6px !important; align-items: flex-start !important; }
.bs-bars > * { flex: 1 1 0 !important; min-width: 0 !important; }
.bs-bars .label-wrap { padding: 2px 4px !important; font-size: 13px; }
.bs-tight { gap: 0 !important; }
.bs-tight .html-container, .bs-tight .prose { padding: 1px 8px !important; min-height: 0 !important; }
.bs-tight > div:has(> .html-container > .prose:empty), .bs-tight > div:has(.prose:empty) { display: none; }
.bs-field .block, .bs-field.block { padding: 3px 8px !important; }
.bs-field textarea, .bs-field input { padding: 3px 6px !important; }
.bs-field label.container { display: flex; flex-direction: row; align-items: center; gap: 6px; }
.bs-field span[data-testid=block-info] { flex: 0 0 92px; margin: 0 !important; font-size: 12px; line-height: 1.2; }
.bs-field label.container > div { flex: 1 1 auto; }
.bs-bars .bs-progress { gap: 8px; font-size: 12px; flex-wrap: nowrap; }
.bs-bars .bs-progress progress { width: 70px; }
.bs-actions { position: sticky; bottom: 0; z-index: 20; background: var(--body-background-fill, #fff) !important;
  padding: 6px 0 !important; gap: 4px !important; border-top: 1px solid #e5e7eb; }
.bs-decisions { gap: 6px !important; flex-wrap: nowrap !important; }
.bs-decisions button { white-space: nowrap; }
.bs-axis .wrap { flex-wrap: nowrap !important; }
"""


def revert_preview_html(rev: int, changes: list[tuple[str, Any, Any]], unsaved: dict[str, Any]) -> str:
    """The fields a revert to `rev` will change (now → then), before it is confirmed; nothing else changes."""
    if not changes:
        return (f'<div class="bs-error">rev {rev}: 되돌릴 것이 없습니다 · no field you may edit here differs '
                "from it</div>")
    rows = "".join(f'<tr class="bs-revert-row" data-path="{esc(path)}"><td><code>{esc(path)}</code></td>'
                   f"<td>{esc(now)}</td><td>→</td><td>{esc(then)}</td></tr>" for path, now, then in changes)
    dropped = (f'<div class="bs-note">저장하지 않은 수정 {len(unsaved)}개는 버려집니다 · your {len(unsaved)} unsaved '
               "edit(s) here will be dropped</div>" if unsaved else "")
    return (f"<div>rev {rev}으로 되돌리면 바뀌는 것 · Reverting to rev {rev} changes only these fields "
            "(every other field stays as it is now):</div>"
            '<table class="bs-revert"><tr><th>field</th><th>now</th><th></th><th>after the revert</th></tr>'
            f"{rows}</table>{dropped}")
