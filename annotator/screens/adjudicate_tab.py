"""The Adjudicate tab (admins): a disputed overlapped item (rendered, with its page) and its
reviewers' decisions side by side, in words, each field they edited rendered beside the item's
value now; the lead picks the decision and, field by field, whose value to keep (or takes one
reviewer's whole decision), and applies it (adjudication.resolve). Also the `adjudicate` API
endpoint, which takes the edits as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gradio as gr

from annotator.review import adjudication
from annotator.review.adjudication import ADJUDICATE, Case
from annotator.review.queue_specs import QUEUES, NotAllowed
from annotator.screens import views
from annotator.screens.events import fast
from annotator.screens.preview import LATEX_DELIMITERS, to_markdown
from curation.core.errors import BenchsmithError, ConflictError
from curation.core.item import ItemValidationError
from curation.core.store import get_path

NO_CASE = "조정할 문항이 없습니다 · Nothing to adjudicate"
NOW = "__now__"  # a field pick that keeps the item's value now
MAX_FIELDS = 8  # field pickers on the form; a case editing more fields shows the rest as a note


def decision_word(queue: str, name: str | None) -> str:
    """A decision as the words its queue's spec gives it (승인 · Accept), not its code."""
    if not name:
        return "—"
    return next((d.label for d in QUEUES[queue].decisions if d.name == name), name)


def _shown(value: Any) -> str:
    """A field's value as the page shows it: Markdown with LaTeX, escaped."""
    if value is None or value == "":
        return "—"
    return to_markdown(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def case_paths(case: Case) -> list[str]:
    return sorted({path for row in case.decisions for path in row.edits})


def case_html(case: Case, rev: int) -> str:
    """The reviewers side by side: each one's decision in words, reason and the revision they saw."""
    heads = "".join(f'<th class="bs-reviewer">{views.esc(row.user)}</th>' for row in case.decisions)
    cells = [("결정 · Decision", lambda row: f'<b class="bs-decision" data-decision="{views.esc(row.decision)}">'
                                          f"{views.esc(decision_word(case.queue, row.decision))}</b>"),
             ("사유 · Reason", lambda row: views.esc(row.reason or "—")),
             ("기준 rev · Made on", lambda row: f"rev {row.base_rev}" + (" (이후 바뀜 · item moved on since)"
                                                                           if row.base_rev != rev else ""))]
    body = "".join(f"<tr><th>{title}</th>" + "".join(f"<td>{cell(row)}</td>" for row in case.decisions) + "</tr>"
                   for title, cell in cells)
    return (f'<div class="bs-case" data-item="{views.esc(case.item_id)}"><b>{views.esc(QUEUES[case.queue].title)}</b> · '
            f"<code>{views.esc(case.item_id)}</code> · rev {rev}</div>"
            f'<table class="bs-table bs-side-by-side"><tr><th></th>{heads}</tr>{body}</table>')


def fields_markdown(case: Case, now: dict[str, Any]) -> str:
    """Each field a reviewer edited: the item's value now beside each reviewer's, as a Markdown table
    the page renders with its LaTeX (a value is shown whole, not as a diff)."""
    paths = case_paths(case)
    if not paths:
        return "수정한 필드 없음 · No reviewer edited a field"

    def cell(value: Any) -> str:
        return _shown(value).replace("\n", " ").replace("|", "\\|")

    head = "| 필드 · Field | 지금 · Now | " + " | ".join(views.esc(row.user) for row in case.decisions) + " |"
    rule = "|" + "---|" * (2 + len(case.decisions))
    rows = [f"| `{path}` | {cell(get_path(now, path))} | "
            + " | ".join(cell(row.edits[path]) if path in row.edits else "*그대로 · unchanged*" for row in case.decisions)
            + " |" for path in paths]
    return "\n".join([head, rule, *rows])


class AdjudicateTab:
    """The lead's form: the item (LaTeX rendered, its page), the reviewers side by side, one decision
    to apply (in words) and, per field any reviewer edited, whose value to keep."""

    def __init__(self, ctx: Any, item_markdown: Callable[[dict[str, Any] | None], str],
                 page_of: Callable[[dict[str, Any]], str] = lambda record: ""):
        self.ctx, self.item_markdown, self.page_of = ctx, item_markdown, page_of
        self.state = gr.State(None)  # {"queue", "item_id", "rev", "paths"} of the case on screen
        with gr.Row(equal_height=True):
            self.b_next = gr.Button("다음 사례 · Next case", size="sm", scale=0, min_width=160, variant="primary",
                                    elem_id="adjudicate-next")
            self.status = gr.HTML(elem_id="adjudicate-status")
        with gr.Row():
            with gr.Column(scale=5):
                self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="adjudicate-question")
                self.page = gr.HTML(elem_id="adjudicate-page", elem_classes=["bs-page-host"])
            with gr.Column(scale=6):
                self.case = gr.HTML(elem_id="adjudicate-case")
                self.fields = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="adjudicate-fields")
                self.take = gr.Radio([], label="검토자 결정 모두 가져오기 · Take one reviewer's decision and fields",
                                     elem_id="adjudicate-take")
                self.decision = gr.Radio([], label="적용할 결정 · Decision to apply", elem_id="adjudicate-decision")
                self.picks = [gr.Radio([], visible=False, elem_classes=["bs-field-pick"], elem_id=f"adjudicate-pick-{n}")
                              for n in range(1, MAX_FIELDS + 1)]
                self.more = gr.HTML(elem_id="adjudicate-more")
                self.reason = gr.Textbox(label="사유 · Reason", lines=1, elem_id="adjudicate-reason")
                self.b_apply = gr.Button("판정 적용 · Apply", variant="primary", elem_id="adjudicate-apply")
        self._wire()

    @property
    def outputs(self) -> list[Any]:
        return [self.state, self.status, self.question, self.page, self.case, self.fields, self.take, self.decision, *self.picks,
                self.more, self.reason]

    def show(self, after: tuple[str, str] | None, message: str = "", error: str = "") -> list[Any]:
        """The next disputed item after `after` (wrapping round), or the first."""
        engine = self.ctx.workspace.store.engine
        case = adjudication.next_case(engine, after)
        status = (f'<div class="bs-message">{views.esc(message)}</div>' if message else "") + (
            f'<div class="bs-error" role="alert">{views.esc(error)}</div>' if error else "")
        if case is None:
            return [None, status + f'<div class="bs-note">{NO_CASE}</div>', "", "", "", "", gr.update(choices=[], value=None),
                    gr.update(choices=[], value=None), *[gr.update(visible=False, value=None)] * MAX_FIELDS, "", ""]
        stored = self.ctx.workspace.store.get(case.item_id)
        now = stored.item.to_record()
        paths = case_paths(case)
        status += f"<span>{adjudication.count_cases(engine)} 건 · disputed items</span>"
        picks = []
        for n in range(MAX_FIELDS):
            if n >= len(paths):
                picks.append(gr.update(visible=False, choices=[], value=None))
                continue
            path = paths[n]
            choices = [(f"지금 그대로 · keep now: {_plain(get_path(now, path))}", NOW)] + [
                (f"{row.user}: {_plain(row.edits[path])}", row.user) for row in case.decisions if path in row.edits]
            picks.append(gr.update(visible=True, choices=choices, value=NOW, label=f"{path} — 누구의 값 · whose value"))
        more = (f'<div class="bs-error">필드 {len(paths) - MAX_FIELDS}개 더: API로 조정하세요 · {len(paths) - MAX_FIELDS} more '
                "fields: settle this case through the adjudicate API</div>" if len(paths) > MAX_FIELDS else "")
        decisions = [(d.label, d.name) for d in QUEUES[case.queue].decisions]
        return [{"queue": case.queue, "item_id": case.item_id, "rev": stored.rev, "paths": paths}, status,
                self.item_markdown(now), self.page_of(now), case_html(case, stored.rev), fields_markdown(case, now),
                gr.update(choices=[(f"{row.user}: {decision_word(case.queue, row.decision)}", row.user)
                                   for row in case.decisions], value=None),
                gr.update(choices=decisions, value=None), *picks, more, ""]

    def _case(self, state: dict[str, Any] | None) -> Case | None:
        return adjudication.case(self.ctx.workspace.store.engine, state["queue"], state["item_id"]) if state else None

    def _wire(self) -> None:
        ctx = self.ctx

        def next_case(state: dict[str, Any] | None, request: gr.Request) -> list[Any]:
            ctx.member(request, ADJUDICATE)
            return self.show((state["queue"], state["item_id"]) if state else None)

        def take(state: dict[str, Any] | None, user: str | None, request: gr.Request) -> list[Any]:
            """One reviewer's decision, reason and every field they edited (the others kept as now)."""
            ctx.member(request, ADJUDICATE)
            case = self._case(state)
            row = next((row for row in case.decisions if row.user == user), None) if case else None
            if row is None or state is None:
                return [gr.skip()] * (2 + MAX_FIELDS)
            picks = [user if n < len(state["paths"]) and state["paths"][n] in row.edits else
                     (NOW if n < len(state["paths"]) else gr.skip()) for n in range(MAX_FIELDS)]
            return [row.decision, *picks, row.reason or ""]

        def apply(data: dict[Any, Any], request: gr.Request) -> list[Any]:
            lead = ctx.member(request, ADJUDICATE)
            state, decision = data[self.state], data[self.decision]
            if not state:
                return self.show(None, error=NO_CASE)
            case = self._case(state)
            theirs = {row.user: row.edits for row in case.decisions} if case else {}
            edits = {path: theirs[data[pick]][path] for path, pick in zip(state["paths"], self.picks, strict=False)
                     if data[pick] not in (None, NOW) and path in theirs.get(data[pick], {})}
            at = (state["queue"], state["item_id"])
            try:
                new_rev = resolve_request(ctx, lead, state["queue"], state["item_id"], state["rev"], decision or "",
                                          json.dumps(edits, ensure_ascii=False), data[self.reason] or "")
            except (BenchsmithError, ItemValidationError, ValueError) as error:
                # refused: the form stays as the lead left it
                kept = [gr.skip()] * len(self.outputs)
                kept[1] = (f'<div class="bs-error" role="alert">적용하지 않았습니다 · Not applied: '
                           f"{views.esc(str(error))}</div>")
                return kept
            return self.show(at, f"{state['item_id']}: {decision_word(state['queue'], decision)} 적용 · "
                                 f"applied as rev {new_rev}")

        self.b_next.click(next_case, [self.state], self.outputs, api_visibility="private", **fast(self.status))
        self.take.input(take, [self.state, self.take], [self.decision, *self.picks, self.reason],
                        api_visibility="private", **fast(self.status))
        self.b_apply.click(apply, {self.state, self.decision, self.reason, *self.picks}, self.outputs,
                           api_visibility="private", **fast(self.status))

    def open(self, user: Any) -> list[Any]:
        return self.show(None) if user.role in QUEUES[ADJUDICATE].roles else [gr.skip()] * len(self.outputs)


def _plain(value: Any, limit: int = 80) -> str:
    """A value on a pick's label (plain text, cut short: the table above shows it rendered)."""
    text = "—" if value is None or value == "" else (value if isinstance(value, str) else
                                                     json.dumps(value, ensure_ascii=False))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def resolve_request(ctx: Any, lead: Any, queue: str, item_id: str, expect_rev: int, decision: str, edits_json: str,
                    reason: str) -> int:
    """The lead's decision as the page and the API send it; NotAllowed is refused as an error."""
    edits = json.loads(edits_json or "{}")
    if not isinstance(edits, dict):
        raise ValueError("edits must be a JSON object")
    try:
        return adjudication.resolve(ctx.workspace.store, lead, queue, item_id, int(expect_rev), decision,
                                    edits=edits, reason=reason)
    except NotAllowed as error:
        raise gr.Error(f"허용되지 않습니다 · Not allowed: {error}") from None


def register_api(ctx: Any, concurrency: int) -> None:
    def adjudicate(queue: str, item_id: str, expect_rev: int, decision: str, edits_json: str = "{}", reason: str = "",
                   request: gr.Request | None = None) -> dict:
        """The lead's decision on a disputed overlapped item (admins). Returns {"status": "saved"|"conflict"|"invalid",
        "rev", "message"}."""
        lead = ctx.member(request, ADJUDICATE)
        try:
            rev = resolve_request(ctx, lead, queue, item_id, expect_rev, decision, edits_json, reason)
        except ConflictError as error:
            return {"status": "conflict", "rev": error.current_rev, "message": str(error)}
        except (BenchsmithError, ItemValidationError, ValueError) as error:
            return {"status": "invalid", "rev": None, "message": str(error)}
        return {"status": "saved", "rev": rev, "message": f"{decision} applied as rev {rev}"}

    gr.api(adjudicate, api_name="adjudicate", concurrency_limit=concurrency)
