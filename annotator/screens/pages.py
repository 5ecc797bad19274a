"""The app's two pages, and what both show on top: the navbar, who is signed in, log out.

Gradio serves a page's HTML with the config of that page's components and events only
(gradio/routes.py `get_page_config`): the review page every login loads is 339 KB where the
one-page app was 505 KB, and the expert page 202 KB.

- `/` (REVIEW): item, Korea-specific and rationale review, what annotators use all day;
- `/expert` (EXPERT): expert scoring, suspects, adjudicate, admin and stats.

Both are Gradio routes behind the same gate (a session or 401) and the same server-side role
checks; the navbar only saves a click, it is not what keeps annotators out.
"""

from __future__ import annotations

import gradio as gr

from annotator.review import auth
from annotator.screens.login_page import LOGOUT_JS

REVIEW_TITLE = "검토 · Review"
EXPERT_TITLE = "전문가 · Experts"
EXPERT_PATH = "expert"


class PageHeader:
    """The navbar (both pages, bilingual names), the signed-in user and the logout button, made
    once per page. Annotators see the expert page's link too: that page shows them no tab."""

    def __init__(self, local_mode: bool):
        self.local_mode = local_mode
        gr.Navbar(main_page_name=REVIEW_TITLE, elem_id="bs-navbar")
        # who and the logout sit in the navbar's line (views.CSS places this row there), not a full-width bar
        with gr.Row(elem_id="bs-header", equal_height=True):
            self.who = gr.Markdown(elem_id="whoami", container=False)
            if not local_mode:  # a POST with the page's origin (gate.py), never a GET link
                gr.Button("로그아웃 · Log out", size="sm", scale=0, min_width=110, elem_id="logout").click(
                    None, js=LOGOUT_JS)

    def load(self, user: auth.User) -> str:
        return f"**{user.name}** · {user.role}" + (" · 로컬 모드 · local mode (no users configured)"
                                                  if self.local_mode else "")
