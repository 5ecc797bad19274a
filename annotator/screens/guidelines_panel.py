"""The guidelines panel of a queue: the workspace's Markdown, rendered; admins get an editor."""

from __future__ import annotations

from typing import Any

import gradio as gr

from annotator.review.guidelines import read_guidelines, write_guidelines
from annotator.screens.events import fast
from annotator.screens.views import esc
from curation.core.errors import BenchsmithError


class GuidelinesPanel:
    def __init__(self, ctx: Any, queue: str):
        self.ctx, self.queue = ctx, queue
        with gr.Accordion("지침 · Guidelines", open=False, elem_id=f"{queue}-guidelines-box"):
            self.text = gr.Markdown(elem_id=f"{queue}-guidelines")
            self.editor = gr.Textbox(label="지침 편집 (Markdown, 관리자) · Edit the guidelines (Markdown, admins)",
                                     lines=8, visible=False, elem_id=f"{queue}-guidelines-editor")
            self.save = gr.Button("지침 저장 · Save guidelines", size="sm", visible=False,
                                  elem_id=f"{queue}-guidelines-save")
            self.note = gr.HTML(elem_id=f"{queue}-guidelines-note")
        self.save.click(self._save, [self.editor], [self.text, self.note], api_visibility="private", **fast(self.note))

    @property
    def outputs(self) -> list[Any]:
        return [self.text, self.editor, self.save]

    def load(self, user: Any) -> list[Any]:
        text = read_guidelines(self.ctx.workspace.root, self.queue)
        admin = user.role == "admin"
        return [text, gr.Textbox(value=text, visible=admin), gr.Button(visible=admin)]

    def _save(self, text: str, request: gr.Request) -> tuple[str, str]:
        user = self.ctx.user(request)
        if user.role != "admin":
            raise gr.Error("관리자만 지침을 고칠 수 있습니다 · Only admins edit the guidelines")
        try:
            write_guidelines(self.ctx.workspace.root, self.queue, text or "")
        except BenchsmithError as error:
            return read_guidelines(self.ctx.workspace.root, self.queue), f'<span class="bs-error">{esc(str(error))}</span>'
        return text, f'<span class="bs-message">저장했습니다 · Saved by {esc(user.name)}</span>'
