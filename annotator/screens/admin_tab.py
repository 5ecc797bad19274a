"""The admin tab: users and roles, assignment with overlap, progress per user and queue."""

from __future__ import annotations

from typing import Any

import gradio as gr

from annotator.review import auth, queues, stats, verdicts
from annotator.screens import views
from annotator.screens.events import fast
from curation.core.errors import BenchsmithError

USER_COLUMNS = [("name", "사용자 · User"), ("role", "역할 · Role")]
PROGRESS_COLUMNS = [("user", "사용자 · User"), ("queue", "대기열 · Queue"), ("decided", "결정 · Decided"),
                    ("assigned", "배정 · Assigned"), ("assigned_done", "배정 완료 · Assigned done")]


class AdminTab:
    def __init__(self, ctx: Any, users: list[str]):
        self.ctx = ctx
        gr.Markdown("#### 사용자 · Users and roles")
        self.users_table = gr.HTML(elem_id="admin-users")
        with gr.Row(equal_height=True):
            self.name = gr.Textbox(label="이름 · Name", lines=1, elem_id="admin-user-name")
            self.role = gr.Dropdown(list(auth.ROLES), value="annotator", label="역할 · Role", elem_id="admin-user-role")
            self.password = gr.Textbox(label=f"비밀번호 · Password (≥ {auth.MIN_PASSWORD})", type="password",
                                       elem_id="admin-user-password")
            self.replace = gr.Checkbox(label="있으면 바꾸기 · Replace an existing user", elem_id="admin-user-replace")
        self.b_add = gr.Button("사용자 추가·변경 · Add or change the user", size="sm", elem_id="admin-user-add")
        gr.Markdown("#### 배정 · Assignment (each item to OVERLAP of the chosen people)")
        with gr.Row(equal_height=True):
            self.queue = gr.Dropdown([*queues.ITEM_QUEUES, "suspects", "verdicts"], value="item", label="대기열 · Queue",
                                     elem_id="admin-assign-queue")
            self.assignees = gr.Dropdown(users, multiselect=True, label="사람 · People", elem_id="admin-assign-users")
            self.overlap = gr.Number(value=1, precision=0, minimum=1, label="중복 · Overlap", elem_id="admin-assign-overlap")
        self.b_assign = gr.Button("배정 · Assign", size="sm", elem_id="admin-assign")
        self.note = gr.HTML(elem_id="admin-note")
        gr.Markdown("#### 진행 · Progress per user and queue")
        self.progress = gr.HTML(elem_id="admin-progress")
        outputs = [self.note, self.users_table, self.progress, self.assignees]
        self.b_add.click(self._add_user, [self.name, self.role, self.password, self.replace], outputs,
                         api_visibility="private", **fast(self.note))
        self.b_assign.click(self._assign, [self.queue, self.assignees, self.overlap], outputs, api_visibility="private",
                            **fast(self.note))

    @property
    def outputs(self) -> list[Any]:
        return [self.users_table, self.progress]

    def load(self) -> list[Any]:
        engine = self.ctx.workspace.store.engine
        rows = [{"name": u.name, "role": u.role} for u in auth.list_users(engine)]
        return [views.table_html(rows, USER_COLUMNS), views.table_html(stats.progress_rows(engine), PROGRESS_COLUMNS)]

    def _admin(self, request: gr.Request) -> str:
        user = self.ctx.user(request)
        if user.role != "admin":
            raise gr.Error("관리자만 · Admins only")
        return user.name

    def _done(self, note: str) -> list[Any]:
        names = [u.name for u in auth.list_users(self.ctx.workspace.store.engine)]
        return [note, *self.load(), gr.Dropdown(choices=names)]

    def _add_user(self, name: str, role: str, password: str, replace: bool, request: gr.Request) -> list[Any]:
        self._admin(request)
        try:
            user = auth.add_user(self.ctx.workspace.store.engine, (name or "").strip(), role, password or "",
                                 replace=bool(replace))
        except BenchsmithError as error:
            return self._done(f'<span class="bs-error">{views.esc(str(error))}</span>')
        return self._done(f'<span class="bs-message">{views.esc(user.name)} ({views.esc(user.role)}) saved</span>')

    def _assign(self, queue: str, assignees: list[str] | None, overlap: float | None, request: gr.Request) -> list[Any]:
        self._admin(request)
        try:
            # the Suspects queue is read from `analyze suspects`, the Verdicts queue from its loaded responses,
            # not the items table: their open ones
            ids = (self.ctx.suspects.membership().ids if queue == "suspects"
                   else verdicts.task_keys(self.ctx.workspace.store.engine) if queue == "verdicts" else None)
            report = queues.assign(self.ctx.workspace.store.engine, queue, assignees or [], int(overlap or 1),
                                   item_ids=ids)
        except BenchsmithError as error:
            return self._done(f'<span class="bs-error">{views.esc(str(error))}</span>')
        self.ctx.progress.changed(queue)
        per_user = ", ".join(f"{u} +{n}" for u, n in sorted(report.per_user.items())) or "nothing new"
        return self._done(f'<span class="bs-message">{views.esc(queue)}: {report.added} new assignments over '
                          f"{report.items} items ({views.esc(per_user)})</span>")
