"""The item's answer key in the review page: a format selector, the controls of the chosen format
(key_form.py says what each holds), 배점, and the key shown highlighted as a "정답" badge.

The editor gives the item queue two fields, `answer` (a key_form form) and `points`; they are
synced into the user's draft as they change and saved through the same compare-and-swap save as
every field. Who may change them is the queue spec's `answer` and `points` rules: a role without
them sees the controls read-only (the server refuses a changed key from it in any case).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gradio as gr

from annotator.review import key_form
from annotator.review.actions import Session
from annotator.review.key_form import CONTROLS, FORM_LABEL_ORDER, FORMAT_LABELS, KeyFormError
from annotator.screens import views
from annotator.screens.events import fast
from annotator.screens.preview import LATEX_DELIMITERS, to_markdown
from curation.core.errors import BenchsmithError
from scoring.portable import answer_text

if TYPE_CHECKING:
    from annotator.screens.app import ItemQueueTab

MARKERS = "①②③④⑤⑥⑦⑧⑨⑩"
PATHS = ("answer", "points")
READ_ONLY = "정답과 배점은 전문가·관리자가 고칩니다 · experts and admins edit the key and its points"


def _marker(number: int) -> str:
    return MARKERS[number - 1] if 1 <= number <= len(MARKERS) else f"({number})"


def key_markdown(answer: Any, points: Any = None) -> str:
    """The key as a highlighted "정답" line (Markdown with LaTeX), what every view of an item shows:
    its text in its format's words, and 배점."""
    badge = '<span class="bs-key bs-key-badge">✔ 정답 · Key</span>'
    worth = ""
    try:
        value = key_form.points_of(points)
        worth = f" · 배점 · points **{value:g}**" if value is not None else ""
    except KeyFormError as error:
        worth = f" · <span class='bs-error' role='alert'>{views.esc(str(error))}</span>"
    if key_form.is_form(answer):
        try:
            answer = key_form.key_of(answer)
        except KeyFormError as error:
            return f"{badge} <span class='bs-error' role='alert'>{views.esc(str(error))}</span>{worth}"
    if not isinstance(answer, dict) or "format" not in answer:
        return f"{badge} 정답 없음 · no key{worth}" if answer is None else f"{badge} {to_markdown(str(answer))}{worth}"
    kind = answer["format"]
    label = FORMAT_LABELS.get(kind, kind)
    return f"{badge} <span class='bs-key-text bs-key-{kind}'>{_key_text(answer)}</span> ({label}){worth}"


def _key_text(key: dict[str, Any]) -> str:
    kind = key["format"]
    if kind == "choice":
        text = " ".join(_marker(int(n)) for n in key.get("options") or [])
        return text + (" (모두 · all required)" if key.get("require_all") and len(key.get("options") or []) > 1 else "")
    if kind == "numeric":
        text = to_markdown(answer_text(key))
        tolerances = [f"± {key['tolerance']:g}" if key.get("tolerance") is not None else "",
                      f"± {100 * key['relative_tolerance']:g}%" if key.get("relative_tolerance") is not None else ""]
        shown = ", ".join(t for t in tolerances if t)
        return f"**{text}**" + (f" ({shown})" if shown else "")
    if kind == "text":
        accepted = " | ".join(to_markdown(str(a)) for a in key.get("accepted") or [])
        rules = [r for r, on in (("목록 밖은 오답 · strict", key.get("strict")),
                                 ("정확히 · exact", key.get("normalise") == "exact")) if on]
        return f"**{accepted}**" + (f" ({', '.join(rules)})" if rules else "")
    if kind == "expression":
        return f"\\({views.esc(key.get('latex') or '')}\\)"
    if kind == "judged":
        rubric = f" · 채점 기준 · rubric: {to_markdown(key['rubric'])}" if key.get("rubric") else ""
        return f"**{to_markdown(key.get('reference') or '')}**{rubric}"
    if kind == "parts":
        labels = key.get("labels") or [f"({n})" for n in range(1, len(key.get("parts") or []) + 1)]
        return " · ".join(f"{to_markdown(label)} {_key_text(part)}" for label, part in
                          zip(labels, key.get("parts") or [], strict=False))
    return f"**{to_markdown(answer_text(key))}**"


def expression_preview(latex: str) -> str:
    latex = key_form.expression_latex(latex or "")
    if not latex:
        return ""
    problems = key_form.latex_problems(latex)
    if problems:
        return f"<span class='bs-error'>{views.esc('; '.join(problems))}</span>"
    return f"\\({views.esc(latex)}\\)"


class KeyEditor:
    """Laid out where it is made (inside the item tab's column); `tab` wires it."""

    def __init__(self, queue: str):
        q = self.queue = queue
        self.controls: dict[str, Any] = {}
        self.groups: dict[str, Any] = {}
        with gr.Group(elem_id=f"{q}-key", elem_classes=["bs-key-editor"]):
            self.badge = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id=f"{q}-key-badge",
                                     elem_classes=["bs-key-line"])
            # a role that may not change the key sees it as the badge above, not as controls that fail on save
            self.read_only = gr.Markdown(READ_ONLY, visible=False, elem_id=f"{q}-key-read-only",
                                         elem_classes=["bs-note", "bs-key-line"])
            with gr.Column(elem_id=f"{q}-key-controls") as self.controls_box:
                with gr.Row(equal_height=True):
                    self.format = gr.Dropdown([(FORMAT_LABELS[name], name) for name in FORM_LABEL_ORDER], value="",
                                              label="정답 형식 · Key format", scale=3, elem_id=f"{q}-key-format")
                    self.points = gr.Textbox(label="배점 · Points", lines=1, max_lines=1, scale=1, min_width=90,
                                             elem_id=f"{q}-points")
                with gr.Group(visible=False, elem_id=f"{q}-key-choice") as self.groups["choice"], gr.Row(equal_height=True):
                    self._text("choice_options", "정답 번호 · Option numbers (3 or 1, 3)", scale=3)
                    self._check("choice_require_all", "모두 골라야 정답 · All required")
                with gr.Group(visible=False, elem_id=f"{q}-key-numeric") as self.groups["numeric"]:
                    with gr.Row(equal_height=True):
                        self._text("numeric_value", "값 · Value", scale=2)
                        self._text("numeric_unit", "단위 · Unit", scale=1)
                    with gr.Row(equal_height=True):
                        self._text("numeric_tolerance", "허용 오차 ± · Tolerance", scale=1)
                        self._text("numeric_relative_tolerance", "상대 오차 · Relative (0.01 or 1%)", scale=1)
                with gr.Group(visible=False, elem_id=f"{q}-key-text") as self.groups["text"]:
                    self._text("text_accepted", "인정 답 (한 줄에 하나) · Accepted answers, one per line", lines=2)
                    with gr.Row():
                        self._check("text_strict", "목록 밖은 오답 · Anything else is wrong (strict)")
                        self._check("text_exact", "정확히 일치 · Exact match (no folding)")
                with gr.Group(visible=False, elem_id=f"{q}-key-set") as self.groups["set"]:
                    self._text("set_members", "고른 것 · Members (ㄱ, ㄷ)")
                with gr.Group(visible=False, elem_id=f"{q}-key-expression") as self.groups["expression"]:
                    self._text("expression_latex", "수식 (LaTeX) · Expression (LaTeX)")
                    self.expression_preview = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_classes=["bs-preview"],
                                                          elem_id=f"{q}-key-expression-preview")
                with gr.Group(visible=False, elem_id=f"{q}-key-judged") as self.groups["judged"]:
                    self._text("judged_reference", "모범 답안 · Reference answer", lines=2)
                    self._text("judged_rubric", "채점 기준 · Rubric (optional)", lines=2)
                with gr.Group(visible=False, elem_id=f"{q}-key-parts") as self.groups["parts"]:
                    self._text("parts_lines", "부분 정답 (줄마다 '(1): 답 [형식]') · Parts, one per line: LABEL: ANSWER [format]",
                               lines=3)

    def _text(self, name: str, label: str, lines: int = 1, scale: int = 1) -> None:
        self.controls[name] = gr.Textbox(label=label, lines=lines, max_lines=1 if lines == 1 else None, scale=scale,
                                         min_width=80,
                                         elem_id=f"{self.queue}-key-{name.replace('_', '-')}")

    def _check(self, name: str, label: str) -> None:
        self.controls[name] = gr.Checkbox(False, label=label, scale=1, min_width=120,
                                          elem_id=f"{self.queue}-key-{name.replace('_', '-')}")

    @property
    def text_ids(self) -> list[str]:
        """The element ids of the text controls (the edit relay nudges them on IME input)."""
        boxes = [self.points, *(c for c in self.controls.values() if isinstance(c, gr.Textbox))]
        return [box.elem_id for box in boxes if box.elem_id]

    # -- values ------------------------------------------------------------------------------
    @property
    def inputs(self) -> list[Any]:
        """The components whose values make the two fields: the format, 배점, every control."""
        return [self.format, self.points, *self.controls.values()]

    def values(self, given: list[Any]) -> dict[str, Any]:
        """{"answer": form, "points": …} from the inputs' values, in `inputs` order."""
        chosen, points, *rest = given
        controls = dict(zip(self.controls, rest, strict=True))
        return {"answer": key_form.make_form(chosen or "", controls), "points": points}

    def values_from(self, data: dict[Any, Any]) -> dict[str, Any]:
        return self.values([data[component] for component in self.inputs])

    # -- rendering ---------------------------------------------------------------------------
    @property
    def outputs(self) -> list[Any]:
        return [self.badge, *self.inputs, *self.groups.values(), self.expression_preview, self.read_only,
                self.controls_box]

    def render(self, shown: dict[str, Any] | None, editable: bool | None = None) -> list[Any]:
        """Values for `outputs` from the item as shown (the user's edits applied); `editable`: set the
        controls' interactivity (at opening, from the user's role), None to leave it."""
        shown = shown or {}
        answer = shown.get("answer")
        values = key_form.controls_of(answer if answer is not None else None)
        if isinstance(answer, str):  # option numbers typed into a script's edit: shown as typed
            values.update(format="choice", choice_options=answer)
        points = shown.get("points")
        points_text = "" if points is None else (f"{points:g}" if isinstance(points, int | float) else str(points))
        chosen = values["format"]

        def value(v: Any) -> Any:
            return v if editable is None else gr.update(value=v, interactive=editable)

        chooser = value(chosen)
        rendered = [key_markdown(answer, points) if shown else "", chooser, value(points_text),
                    *(value(values[name]) for name in self.controls)]
        rendered += [gr.update(visible=bool(shown) and name == chosen) for name in self.groups]
        rendered.append(expression_preview(values["expression_latex"]) if chosen == "expression" else "")
        shown_as = [gr.skip(), gr.skip()] if editable is None else [gr.update(visible=not editable),
                                                                  gr.update(visible=editable)]
        return [*rendered, *shown_as]

    # -- wiring ------------------------------------------------------------------------------
    def wire(self, tab: ItemQueueTab) -> None:
        ctx, q = tab.ctx, tab.queue
        live = [self.badge, self.expression_preview, tab.draft_note]

        def edited(show_groups: bool) -> Callable[..., list[Any]]:
            def handler(data: dict[Any, Any], request: gr.Request) -> list[Any]:
                """Keeps the key and 배점 in the user's draft (not in the session state: see
                ItemQueueTab._edit_handler) and shows the key as it now reads, or what is wrong."""
                user = ctx.member(request, q)
                session: Session = data[tab.state]
                fields = self.values_from(data)
                form = fields["answer"]
                key: Any = form  # shown with what is wrong unless it makes a key
                try:
                    key = key_form.key_of(form, _current_answer(ctx, session))
                except KeyFormError:
                    pass
                try:
                    draft = views.draft_html(ctx.reviewer.sync(user, copy.deepcopy(session), fields))
                except BenchsmithError as error:
                    draft = f'<span class="bs-error">{views.esc(str(error))}</span>'
                preview = expression_preview(form.get("expression_latex") or "") if form[key_form.FORM] == "expression" else ""
                groups = [gr.update(visible=name == form[key_form.FORM]) for name in self.groups] if show_groups else []
                return [key_markdown(key, fields["points"]), preview, draft, *groups]
            return handler

        inputs = {tab.state, *self.inputs}  # a set: one dict argument
        self.format.input(edited(True), inputs, [*live, *self.groups.values()], api_visibility="private",
                          **fast(tab.draft_note))
        for component in [self.points, *self.controls.values()]:
            events = [component.input] if isinstance(component, gr.Checkbox) else [component.input, component.blur]
            for event in events:
                event(edited(False), inputs, live, trigger_mode="always_last", api_visibility="private",
                      **fast(tab.draft_note))


def _current_answer(ctx: Any, session: Session) -> Any:
    """The item's key now (a multi-part key's unchanged lines keep its parts), None without an item."""
    if session.item_id is None:
        return None
    try:
        return ctx.workspace.store.get(session.item_id).item.to_record().get("answer")
    except BenchsmithError:
        return None


__all__ = ["CONTROLS", "PATHS", "KeyEditor", "expression_preview", "key_markdown"]
