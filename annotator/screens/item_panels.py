"""The panels of the item queues' screens: what a queue shows beside its spec's fields (the left
column) and under them, where the spec's fields and decisions are not enough. The tab itself, its
fields and its decision buttons come from the queue's spec (app.build_item_queue_tab); adding a
queue is a spec, its guideline and, where it needs one, a panel here (PANELS).

- item: the source page with the item's box (zoom, draw a box, re-crop), the figure crops;
- korea: the question and the detector's reasons; the current decision under the form;
- rationale: the question and the drafted rationale; its status and edit distance under the form.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from annotator.review import blinding, queues
from annotator.review.actions import EditError, Session, View
from annotator.review.queue_specs import QUEUES
from annotator.review.render import RenderError
from annotator.screens import views
from annotator.screens.events import fast
from annotator.screens.key_editor import key_markdown
from annotator.screens.preview import LATEX_DELIMITERS, to_markdown
from curation.core.errors import BenchsmithError
from curation.core.store import get_path

MARKERS = "①②③④⑤⑥⑦⑧⑨⑩"


def item_markdown(record: dict[str, Any] | None, *, with_answer: bool = False) -> str:
    """Stem and options as escaped Markdown with LaTeX (read-only views)."""
    if not record:
        return ""
    lines = [to_markdown(record.get("stem", ""))]
    keys = views.key_numbers(record.get("answer"))
    for n, option in enumerate(record.get("options") or [], start=1):
        marker = MARKERS[n - 1] if n <= len(MARKERS) else f"({n})"
        image = " 〔그림 · image〕" if option.get("image") else ""
        line = f"{marker} {to_markdown(option.get('text', ''))}{image}"
        lines.append(f'<span class="bs-key bs-key-option-{n}">{line} ✔ 정답 · key</span>' if n in keys else line)
    answer = record.get("answer")
    # the key once: on its options when it names them, else as its own highlighted line (with
    # `with_answer`, "no key" is said too)
    if (answer is not None and not keys) or (with_answer and answer is None):
        lines.append(key_markdown(answer, record.get("points")))
    return "\n\n".join(lines)


def page_info(ctx: Any, source: dict[str, Any]) -> Any:
    """The source page's size (render.PageInfo), None without a stored PDF page."""
    sha, page = source.get("pdf_sha256"), source.get("page")
    if not sha or not page or not ctx.renderer.has_pdf(sha):
        return None
    try:
        return ctx.renderer.page_info(sha, int(page))
    except BenchsmithError:
        return None


class Panel:
    """Nothing beside or under the fields; a queue's panel overrides what it shows."""

    side_scale, form_scale = 5, 6  # the two columns' widths

    def __init__(self, ctx: Any, tab: Any):
        self.ctx, self.tab = ctx, tab
        self.outputs: list[Any] = []

    def build_side(self) -> None:
        """The left column (made inside it)."""

    def build_form(self) -> None:
        """Under the fields, above the decisions (made inside the form column)."""

    def render(self, view: View) -> list[Any]:
        return []

    def wire(self) -> None:
        """Events of the panel's own controls (after the tab's)."""


class ItemPanel(Panel):
    side_scale, form_scale = 6, 5

    def build_side(self) -> None:
        self.page = gr.HTML(elem_id="item-page", elem_classes=["bs-page-host"])
        self.crops = gr.HTML(elem_id="item-crops")
        with gr.Group():
            self.target = gr.Dropdown([], label="다시 자를 대상 · Re-crop target", elem_id="item-crop-target")
            with gr.Row():
                self.box = [gr.Number(label=name, precision=2, elem_id=f"item-crop-{name}")
                            for name in ("x0", "y0", "x1", "y1")]
            self.recrop = gr.Button("PDF에서 다시 자르기 · Re-crop from the PDF", size="sm", elem_id="item-recrop")
        self.outputs = [self.page, self.crops, self.target, *self.box]

    def render(self, view: View) -> list[Any]:
        shown = view.shown or {}
        slots = [("source.bbox", "문항 상자 · Item box")] + [(path, label) for path, label, _ in views.image_slots(shown)]
        source = shown.get("source") or {}
        info = page_info(self.ctx, source)
        return [views.page_html(shown, info, box_fields="item-crop") if view.stored else "",
                views.crops_html(shown) if view.stored else "",
                gr.update(choices=[(label, path) for path, label in slots], value="source.bbox" if view.stored else None),
                *_box_numbers(source.get("bbox"))]

    def wire(self) -> None:
        ctx, tab, target, box = self.ctx, self.tab, self.target, self.box

        def choose_target(session: Session, path: str | None, request: gr.Request) -> list[Any]:
            ctx.require(request, "item")
            return _box_numbers(_target_box(ctx.reviewer.view(session).shown or {}, path))

        # input, not change: a render that sets the target must not cost a second round trip
        target.input(choose_target, [tab.state, target], box, api_visibility="private", **fast(box[0]))

        def do_recrop(session: Session, path: str | None, x0: float, y0: float, x1: float, y1: float,
                      request: gr.Request) -> list[Any]:
            user = ctx.member(request, "item")
            try:
                view = ctx.reviewer.recrop(user, session, path or "source.bbox", [x0, y0, x1, y1])
            except (EditError, RenderError, BenchsmithError, TypeError) as error:
                view = ctx.reviewer.view(session, error=f"다시 자르지 못했습니다 · Not re-cropped: {error}")
            rendered = tab.render(view, user.name)
            at = tab.outputs.index(target)
            # keep the chosen target and show its box, not the item's: a second re-crop starts from these numbers
            rendered[at : at + 5] = [gr.update(value=path), *_box_numbers(_target_box(view.shown or {}, path))]
            return rendered

        self.recrop.click(do_recrop, [tab.state, target, *box], tab.outputs, api_visibility="private",
                          **fast(tab.status))


def _target_box(shown: dict[str, Any], path: str | None) -> list[float] | None:
    """The box of a re-crop target: the item's box, or the image's own box from its provenance."""
    value = get_path(shown, path or "source.bbox")
    if not path or path == "source.bbox":
        return value
    return (value.get("provenance") or {}).get("bbox") if isinstance(value, dict) else None


def _box_numbers(bbox: list[float] | None) -> list[Any]:
    values = bbox if bbox and len(bbox) == 4 else [None] * 4
    return list(values)


class KoreaPanel(Panel):
    def build_side(self) -> None:
        self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="korea-question")
        self.reasons = gr.HTML(elem_id="korea-reasons")

    def build_form(self) -> None:
        self.decision = gr.HTML(elem_id="korea-decision")
        self.outputs = [self.question, self.reasons, self.decision]

    def render(self, view: View) -> list[Any]:
        shown = view.shown or {}
        flags = shown.get("flags") or {}
        states: dict[bool | None, str] = {True: "한국 특화 · Korea-specific", False: "한국 특화 아님 · Not Korea-specific"}
        state = states.get(flags.get("korea_specific"), "미정 · Undecided")
        last = next((r for r in reversed(queues.reviews_of(self.ctx.workspace.store.engine, view.stored.item.id))
                     if r["queue"] == "korea"), None) if view.stored else None
        word = next((d.label for d in QUEUES["korea"].decisions if last and d.name == last["decision"]), "")
        why = (f" — {views.esc(word or last['decision'])} by {views.esc(last['user'])}: "
               f"<span class='bs-decision-reason'>{views.esc(last['reason'])}</span>" if last and last["reason"] else "")
        return [item_markdown(shown), views.reasons_html("탐지 근거 · Detector's reasons", flags.get("korea_reasons") or []),
                f"<b>현재 판정 · Current decision</b>: {views.esc(state)}{why}" if view.stored else ""]


class RationalePanel(Panel):
    def build_side(self) -> None:
        self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="rationale-question")
        gr.Markdown("**초안 풀이 · Draft rationale**")
        self.draft = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="rationale-original")

    def build_form(self) -> None:
        self.summary = gr.HTML(elem_id="rationale-summary")
        self.outputs = [self.question, self.draft, self.summary]

    def render(self, view: View) -> list[Any]:
        if view.stored is None:
            return ["", "", ""]
        from rapidfuzz.distance import Levenshtein

        ctx = self.ctx
        shown = view.shown or {}
        original = ctx.reviewer.draft_rationale(view.stored.item.id)
        rationale = shown.get("rationale") or {}
        distance = Levenshtein.distance(original, rationale.get("text") or "")
        # who wrote it is not shown where the text is also a blind response (admins see it in the history)
        blind = blinding.hidden_authors(ctx.workspace.store.engine, view.stored.item.id,
                                        [revision for revision, _ in ctx.reviewer.history(view.stored.item.id)])
        author = blinding.HIDDEN if blind and rationale.get("author") else rationale.get("author")
        summary_html = (f"<b>상태 · Status</b>: {views.esc(rationale.get('status'))} · "
                        f"<b>편집 거리 · Edit distance from the draft</b>: <span id='rationale-distance'>{distance}</span>"
                        + (f" · by {views.esc(author)}" if author else ""))
        return [item_markdown(shown, with_answer=True), to_markdown(original), summary_html]


# a queue's panel, where it needs one (a queue without one gets Panel: its fields and decisions only)
PANELS: dict[str, type[Panel]] = {"item": ItemPanel, "korea": KoreaPanel, "rationale": RationalePanel}
