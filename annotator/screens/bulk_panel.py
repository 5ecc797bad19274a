"""The bulk-action panel of an item queue (admins): count the queue shown, then confirm that
number; a queue that holds different items by then is refused.

The queue shown is the one the last move (Find, Next, …) walked, with an item id in the search
box dropped as navigation does (queues.walked): bulk acts on exactly those items. Filters
changed on screen but not applied yet are refused, not silently used, so what is counted is
always what the queue shows. After a bulk action the queue's progress bars are redrawn."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gradio as gr

from annotator.review import bulk, queues
from annotator.review.auth import User
from annotator.screens.events import fast
from annotator.screens.views import esc
from curation.core.errors import BenchsmithError

ASSIGN = "assign"
NOT_APPLIED = ('<span class="bs-error">필터를 바꾸었지만 아직 적용하지 않았습니다 · The filters on screen are not the '
               "queue shown: press Find to show that queue, then count</span>")


class BulkPanel:
    def __init__(self, ctx: Any, queue: str, users: list[str], filters: Callable[..., queues.Filters],
                 filter_inputs: list[Any], shown: Any, progress: Any):
        """`shown`: the gr.State holding the Filters the queue on screen was walked by (None before
        any move); `progress`: the queue's progress bars, redrawn after an action."""
        self.ctx, self.queue, self.filters = ctx, queue, filters
        choices = bulk.actions(queue)
        choices.append(("배정 · Assign to users", ASSIGN))
        with gr.Accordion("일괄 작업 (관리자) · Bulk actions over the queue shown (admins)", open=False, visible=False,
                          elem_id=f"{queue}-bulk-box") as self.box:
            with gr.Row(equal_height=True):
                self.action = gr.Dropdown(choices, value=choices[0][1], label="작업 · Action", elem_id=f"{queue}-bulk-action")
                self.users = gr.Dropdown(users, multiselect=True, label="배정할 사람 · Assign to", elem_id=f"{queue}-bulk-users")
                self.overlap = gr.Number(value=1, precision=0, minimum=1, label="중복 · Overlap", elem_id=f"{queue}-bulk-overlap")
            with gr.Row():
                self.b_count = gr.Button("대상 세기 · Count the items", size="sm", elem_id=f"{queue}-bulk-count")
                self.b_confirm = gr.Button("확인 · Confirm", size="sm", variant="stop", visible=False,
                                           elem_id=f"{queue}-bulk-confirm")
            self.note = gr.HTML(elem_id=f"{queue}-bulk-note")
        self.counted = gr.State(None)
        self.b_count.click(self._count, [self.action, shown, *filter_inputs], [self.counted, self.note, self.b_confirm],
                           api_visibility="private", **fast(self.note))
        self.b_confirm.click(self._confirm, [self.counted, self.users, self.overlap, shown, *filter_inputs],
                             [self.counted, self.note, self.b_confirm, progress], api_visibility="private",
                             **fast(self.note))

    def _admin(self, request: gr.Request) -> User:
        user = self.ctx.user(request)
        if user.role not in queues.spec(self.queue).bulk_roles:
            raise gr.Error("관리자만 일괄 작업을 합니다 · Bulk actions are for admins")
        return user

    def _shown_queue(self, shown: queues.Filters | None, values: tuple[Any, ...]) -> queues.Filters | None:
        """The filters of the queue shown, or None when those on screen differ from them."""
        on_screen = queues.walked(self.ctx.workspace.store.engine, self.filters(*values))
        shown = shown or queues.Filters()
        same = dataclasses.replace(on_screen, order="id") == dataclasses.replace(shown, order="id")  # order selects nothing
        return shown if same else None

    def _count(self, action: str, shown: queues.Filters | None, status: list[str] | None, exam: str, subject: str,
               flag: str, assignee: str, search: str, request: gr.Request) -> tuple[Any, str, Any]:
        self._admin(request)
        filters = self._shown_queue(shown, (status, exam, subject, flag, assignee, search))
        if filters is None:
            return None, NOT_APPLIED, gr.Button(visible=False)
        revs = bulk.matching(self.ctx.workspace.store, self.queue, filters)
        note = (f"<b>{len(revs)}</b> items match ({esc(filters.describe())}). "
                f"확인하면 {len(revs)}개 모두에 적용됩니다 · Confirm applies <b>{esc(action)}</b> to all {len(revs)}.")
        return (action, filters, revs), note, gr.Button(value=f"확인 · Confirm: {action} {len(revs)} items",
                                                        visible=bool(revs))

    def _confirm(self, counted: Any, users: list[str] | None, overlap: float | None, shown: queues.Filters | None,
                 status: list[str] | None, exam: str, subject: str, flag: str, assignee: str, search: str,
                 request: gr.Request) -> tuple[Any, str, Any, Any]:
        user = self._admin(request)
        hidden, progress = gr.Button(visible=False), gr.skip()
        if not counted:
            return None, '<span class="bs-error">먼저 세어 주세요 · Count first</span>', hidden, progress
        action, filters, revs = counted
        if self._shown_queue(shown, (status, exam, subject, flag, assignee, search)) != filters:
            return None, '<span class="bs-error">필터가 바뀌었습니다 · The filter changed: count again</span>', hidden, progress
        now = bulk.matching(self.ctx.workspace.store, self.queue, filters)
        if set(now) != set(revs):
            return None, (f'<span class="bs-error">The filter now matches {len(now)} items, not the {len(revs)} '
                          "counted: count again</span>"), hidden, progress
        try:
            if action == ASSIGN:
                report = queues.assign(self.ctx.workspace.store.engine, self.queue, users or [], int(overlap or 1),
                                       item_ids=list(revs))
                line = f"{report.added} new assignments over {report.items} items"
            else:
                line = bulk.apply(self.ctx.workspace.store, self.queue, action, revs, user).line()
        except BenchsmithError as error:
            return None, f'<span class="bs-error">{esc(str(error))}</span>', hidden, progress
        self.ctx.progress.changed(self.queue)
        return (None, f'<span class="bs-message bs-bulk-done">{esc(action)}: {esc(line)}</span>', hidden,
                self.ctx.progress.html(self.queue, user.name))
