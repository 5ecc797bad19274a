"""The Adjudicate tab (admins): a disputed overlapped item with its reviewers' decisions side by
side (each one's edits as a diff against the item now); the lead takes one reviewer's decision
or merges edits, and applies it (adjudication.resolve). Also the `adjudicate` API endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gradio as gr

from annotator import adjudication, views
from annotator.adjudication import ADJUDICATE, Case
from annotator.events import fast
from annotator.queue_specs import QUEUES, NotAllowed
from curation.errors import BenchsmithError, ConflictError
from curation.item import ItemValidationError
from curation.store import get_path

NO_CASE = "조정할 문항이 없습니다 · Nothing to adjudicate"


def case_html(case: Case, now: dict[str, Any], rev: int) -> str:
    """The reviewers' decisions side by side, each one's edits as `path: now → theirs`."""
    heads = "".join(f'<th class="bs-reviewer">{views.esc(row.user)}</th>' for row in case.decisions)

    def edits(row: adjudication.ReviewerDecision) -> str:
        return "<br>".join(f"<code>{views.esc(path)}</code>: <del>{views.esc(get_path(now, path))}</del> → "
                           f"<ins>{views.esc(value)}</ins>" for path, value in sorted(row.edits.items())) or "—"

    cells = [("결정 · Decision", lambda row: f'<b class="bs-decision">{views.esc(row.decision)}</b>'),
             ("사유 · Reason", lambda row: views.esc(row.reason or "—")),
             ("기준 rev · Made on", lambda row: f"rev {row.base_rev}" + (" (item moved on since)" if row.base_rev != rev
                                                                           else "")),
             ("수정 · Edits", edits)]
    body = "".join(f"<tr><th>{title}</th>" + "".join(f"<td>{cell(row)}</td>" for row in case.decisions) + "</tr>"
                   for title, cell in cells)
    return (f'<div class="bs-case" data-item="{views.esc(case.item_id)}"><b>{views.esc(case.queue)}</b> · '
            f"<code>{views.esc(case.item_id)}</code> · rev {rev}</div>"
            f'<table class="bs-table bs-side-by-side"><tr><th></th>{heads}</tr>{body}</table>')


class AdjudicateTab:
    def __init__(self, ctx: Any, item_markdown: Callable[[dict[str, Any] | None], str]):
        self.ctx, self.item_markdown = ctx, item_markdown
        self.state = gr.State(None)  # {"queue", "item_id", "rev"} of the case on screen
        with gr.Row():
            self.b_next = gr.Button("다음 사례 · Next case", size="sm", variant="primary", elem_id="adjudicate-next")
        self.status = gr.HTML(elem_id="adjudicate-status")
        with gr.Row():
            with gr.Column(scale=5):
                self.question = gr.Markdown(elem_id="adjudicate-question")
            with gr.Column(scale=6):
                self.case = gr.HTML(elem_id="adjudicate-case")
                self.take = gr.Radio([], label="검토자 결정 가져오기 · Take a reviewer's decision", elem_id="adjudicate-take")
                self.decision = gr.Dropdown([], label="적용할 결정 · Decision to apply", elem_id="adjudicate-decision")
                self.edits = gr.Textbox(label="적용할 수정 (JSON, 병합 가능) · Edits to apply (JSON; merge here)", lines=3,
                                        elem_id="adjudicate-edits")
                self.reason = gr.Textbox(label="사유 · Reason", lines=1, elem_id="adjudicate-reason")
                self.b_apply = gr.Button("판정 적용 · Apply", variant="primary", elem_id="adjudicate-apply")
        self._wire()

    @property
    def outputs(self) -> list[Any]:
        return [self.state, self.status, self.question, self.case, self.take, self.decision, self.edits, self.reason]

    def show(self, after: tuple[str, str] | None, message: str = "", error: str = "") -> list[Any]:
        """The next disputed item after `after` (wrapping round), or the first."""
        engine = self.ctx.workspace.store.engine
        case = adjudication.next_case(engine, after)
        status = (f'<div class="bs-message">{views.esc(message)}</div>' if message else "") + (
            f'<div class="bs-error" role="alert">{views.esc(error)}</div>' if error else "")
        if case is None:
            return [None, status + f'<div class="bs-note">{NO_CASE}</div>', "", "", gr.update(choices=[], value=None),
                    gr.update(choices=[], value=None), "", ""]
        stored = self.ctx.workspace.store.get(case.item_id)
        now = stored.item.to_record()
        status += f"<span>{adjudication.count_cases(engine)} 건 · disputed items</span>"
        return [{"queue": case.queue, "item_id": case.item_id, "rev": stored.rev}, status, self.item_markdown(now),
                case_html(case, now, stored.rev), gr.update(choices=[row.user for row in case.decisions], value=None),
                gr.update(choices=list(QUEUES[case.queue].decision_names), value=None), "{}", ""]

    def _wire(self) -> None:
        ctx = self.ctx

        def next_case(state: dict[str, Any] | None, request: gr.Request) -> list[Any]:
            ctx.member(request, ADJUDICATE)
            return self.show((state["queue"], state["item_id"]) if state else None)

        def take(state: dict[str, Any] | None, user: str | None, request: gr.Request) -> list[Any]:
            ctx.member(request, ADJUDICATE)
            case = adjudication.case(ctx.workspace.store.engine, state["queue"], state["item_id"]) if state else None
            row = next((row for row in case.decisions if row.user == user), None) if case else None
            if row is None:
                return [gr.skip()] * 3
            return [row.decision, json.dumps(row.edits, ensure_ascii=False), row.reason or ""]

        def apply(state: dict[str, Any] | None, decision: str | None, edits: str, reason: str,
                  request: gr.Request) -> list[Any]:
            lead = ctx.member(request, ADJUDICATE)
            if not state:
                return self.show(None, error=NO_CASE)
            at = (state["queue"], state["item_id"])
            try:
                new_rev = resolve_request(ctx, lead, state["queue"], state["item_id"], state["rev"], decision or "",
                                          edits, reason)
            except (BenchsmithError, ItemValidationError, ValueError) as error:
                return [gr.skip(), f'<div class="bs-error" role="alert">{views.esc(str(error))}</div>',
                        *[gr.skip()] * 6]
            return self.show(at, f"{state['item_id']}: {decision} 적용 · applied as rev {new_rev}")

        self.b_next.click(next_case, [self.state], self.outputs, api_visibility="private", **fast(self.status))
        self.take.input(take, [self.state, self.take], [self.decision, self.edits, self.reason],
                        api_visibility="private", **fast(self.status))
        self.b_apply.click(apply, [self.state, self.decision, self.edits, self.reason], self.outputs,
                           api_visibility="private", **fast(self.status))

    def open(self, user: Any) -> list[Any]:
        return self.show(None) if user.role in QUEUES[ADJUDICATE].roles else [gr.skip()] * len(self.outputs)


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
