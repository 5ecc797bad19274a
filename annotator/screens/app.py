"""The Gradio app: one tab per queue plus stats, on two pages (pages.py). Layout and wiring only.

Nothing here is module-level state: `build_app` makes every object per app, and all
per-user state lives in gr.State (per browser session) or in the store (drafts, positions),
keyed by the logged-in user from the request.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import gradio as gr

from annotator.review import auth, blinding, claims, queues, scoring, stats
from annotator.review.actions import EditError, Move, Reviewer, Session, View, answer_text
from annotator.review.queue_specs import ADMIN, QUEUES, NotAllowed, button_style
from annotator.review.queues import FLAG_FILTERS, Filters
from annotator.review.render import PdfRenderer
from annotator.review.score_desk import MAX_SIDE, ScoreDesk, ScoreMove, ScoreSession, ScoreView
from annotator.review.suspects import SuspectDesk
from annotator.review.verdicts import VerdictDesk
from annotator.review.verdicts import count as verdicts_count
from annotator.screens import views
from annotator.screens.adjudicate_tab import AdjudicateTab
from annotator.screens.adjudicate_tab import register_api as register_adjudicate_api
from annotator.screens.admin_tab import PROGRESS_COLUMNS, AdminTab
from annotator.screens.bulk_panel import BulkPanel
from annotator.screens.events import fast
from annotator.screens.guidelines_panel import GuidelinesPanel
from annotator.screens.item_panels import PANELS, Panel, item_markdown, page_info
from annotator.screens.key_editor import KeyEditor
from annotator.screens.order_control import order_control
from annotator.screens.pages import EXPERT_PATH, EXPERT_TITLE, REVIEW_TITLE, PageHeader
from annotator.screens.preview import LATEX_DELIMITERS, to_markdown
from annotator.screens.progress import ProgressBars
from annotator.screens.suspects_tab import SuspectsTab
from annotator.screens.verdicts_tab import VerdictsTab, verdict_stats_html
from curation.core.errors import BenchsmithError
from curation.core.item import STATUSES
from curation.core.store import get_path
from curation.core.workspace import Workspace

if TYPE_CHECKING:  # the web layer's; the screens only note whose each page session is
    from annotator.web.session_states import BoundedStateHolder

LOCAL_USER = "local"
API_CONCURRENCY = 8  # script calls (gradio_client) running at once; the page's own events skip the queue
STATS_ROLES = QUEUES["score"].roles  # the stats show the experts' agreement: for those who score


@dataclass
class AppContext:
    workspace: Workspace
    reviewer: Reviewer
    desk: ScoreDesk
    renderer: PdfRenderer
    local_mode: bool  # no users configured, loopback only: everyone is the local admin
    field_ids: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # textbox id → (queue, path)
    order: str = "id"  # the item queues' order when a page opens (queues.ORDERS; annotate --order)
    pages: BoundedStateHolder | None = None  # Gradio's page sessions, told whose each is (dropped at logout)

    progress: ProgressBars = dataclasses.field(init=False)
    suspects: SuspectDesk = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.progress = ProgressBars(self.workspace.store.engine)
        self.suspects = SuspectDesk(self.workspace.store, self.workspace.root)

    def user(self, request: gr.Request | None) -> auth.User:
        name = getattr(request, "username", None) if request is not None else None
        if name is None:
            if self.local_mode:
                return auth.User(LOCAL_USER, "admin")
            self.refuse(request, "로그인이 필요합니다 · Please log in")
        if self.pages is not None and request is not None and request.session_hash:
            self.pages.note_owner(request.session_hash, name)
        return auth.get_user(self.workspace.store.engine, name)

    def member(self, request: gr.Request | None, queue: str) -> auth.User:
        """The signed-in user, refused unless the queue's spec admits their role."""
        user = self.user(request)
        if user.role not in QUEUES[queue].roles:
            raise gr.Error(f"이 대기열을 쓸 수 없습니다 · {user.name} ({user.role}) may not use the {queue} queue")
            self.refuse(request, f"{user.name} ({user.role}) may not use the {queue} queue")
        return user

    def refuse(self, request: gr.Request | None, message: str) -> NoReturn:
        """Refuse the event; the page session it made (holding nothing) is not kept (session_states.py)."""
        if self.pages is not None and request is not None:
            self.pages.drop_if_empty(request.session_hash)
        raise gr.Error(message)

    def blinded(self, view: View, user: str | None) -> View:
        """The view with the names hidden from this user on this item scrubbed (blinding.py), notes included."""
        if view.stored is None:
            return view
        hidden = self.hidden_authors(view.stored.item.id, user)
        if not hidden:
            return view
        stored = dataclasses.replace(view.stored, updated_by=blinding.scrub(view.stored.updated_by, hidden))
        return dataclasses.replace(view, stored=stored, shown=blinding.scrub(view.shown, hidden),
                                   message=blinding.scrub(view.message, hidden), error=blinding.scrub(view.error, hidden))

    def require(self, request: gr.Request | None, queue: str) -> str:
        return self.member(request, queue).name

    def sees_stats(self, request: gr.Request | None) -> auth.User:
        """The signed-in user, refused unless an expert or admin: the stats hold the experts' agreement."""
        user = self.user(request)
        if user.role not in STATS_ROLES:
            raise gr.Error(f"통계는 전문가·관리자만 봅니다 · {user.name} ({user.role}) may not see the stats: "
                           "experts and admins only")
            self.refuse(request, f"{user.name} ({user.role}) may not see the stats: experts and admins only")
        return user

    def sees_authorship(self, user: str | None) -> bool:
        """Admins see who drafted a rationale that is also a blind response; no one else does."""
        return self.local_mode or (user is not None and auth.get_user(self.workspace.store.engine, user).role == ADMIN)

    def hidden_authors(self, item_id: str, user: str | None, revisions: list[Any] | None = None) -> set[str]:
        """The model names to keep from this user on this item (blinding.hidden_authors; none for admins)."""
        if revisions is None:
            revisions = [revision for revision, _ in self.reviewer.history(item_id)]
        names = blinding.hidden_authors(self.workspace.store.engine, item_id, revisions)
        return set() if not names or self.sees_authorship(user) else names

    def shown_history(self, item_id: str, user: str | None) -> list[Any]:
        rows = self.reviewer.history(item_id)
        return blinding.scrub_history(rows, self.hidden_authors(item_id, user, [revision for revision, _ in rows]))


@contextlib.contextmanager
def refused_as_error() -> Iterator[None]:
    """A request the queue's spec does not give the user's role is refused to the caller (page or
    script) as an error, as a queue their role may not open is."""
    try:
        yield
    except NotAllowed as error:
        raise gr.Error(f"허용되지 않습니다 · Not allowed: {error}") from None


def preview(text: Any, **kwargs: Any) -> gr.Markdown:
    return gr.Markdown(to_markdown(text if isinstance(text, str) else ""), latex_delimiters=LATEX_DELIMITERS,
                       elem_classes=["bs-preview"], **kwargs)


def filter_choices(engine: Any) -> dict[str, list[str]]:
    """The exams and subjects in the store, for the filter menus (two index scans, not the
    store's full statistics: this runs at every server start)."""
    from sqlalchemy import select

    from curation.core.store import items_table

    choices: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for name in ("exam", "subject"):
            column = items_table.c[name]
            rows = conn.execute(select(column).where(column.is_not(None)).distinct().order_by(column)).scalars()
            choices[name] = [str(value) for value in rows]
    return choices


class ItemQueueTab:
    """Navigation, status, conflict handling and history shared by the three item queues."""

    def __init__(self, ctx: AppContext, queue: str):
        self.ctx, self.queue = ctx, queue
        self.fields: list[tuple[str, Any, Any, Any]] = []  # (path, textbox, preview, row)
        self.editors: list[KeyEditor] = []  # fields edited with several controls (the key and 배점)
        self.extra_outputs: list[Any] = []
        self.extra_render: Callable[[View], list[Any]] = lambda view: []
        self.decisions: list[tuple[Any, str | None, Any | None]] = []  # wired once every output exists

    # -- layout -------------------------------------------------------------------------
    def build_navigation(self, users: list[str], choices: dict[str, list[str]]) -> None:
        """One line of search and moves; the filters, guidelines and bulk panel as closed bars below it
        (on a 1366×768 screen the item starts about 250 px down, not 620)."""
        q = self.queue
        self.state = gr.State(Session(q))
        with gr.Row(equal_height=True, elem_classes=["bs-navrow"]):
            self.f_search = gr.Textbox(show_label=False, container=False, scale=3, min_width=160,
                                       placeholder="검색 (ID 또는 본문) · Search id or text", elem_id=f"{q}-search")
            self.b_first = gr.Button("찾기 · Find", size="sm", scale=0, min_width=70, elem_id=f"{q}-find")
            self.b_prev = gr.Button("◀ 이전 · Previous (P)", size="sm", scale=0, min_width=120, elem_classes=["bs-prev"],
                                    elem_id=f"{q}-prev")
            self.b_next = gr.Button("다음 · Next (N) ▶", size="sm", scale=0, min_width=120, elem_classes=["bs-next"],
                                    elem_id=f"{q}-next")
            self.b_mine = gr.Button("내 다음 미검토 · Next unreviewed for me", size="sm", scale=0, min_width=200,
                                    variant="primary", elem_id=f"{q}-mine")
            self.b_skip = gr.Button("건너뛰기 · Skip", size="sm", scale=0, min_width=90, elem_id=f"{q}-skip")
        with gr.Row(equal_height=False, elem_classes=["bs-bars"]):
            with gr.Accordion("필터 · Filters", open=False, elem_id=f"{q}-filters-box"):
                with gr.Row(equal_height=True):
                    self.f_status = gr.Dropdown(list(STATUSES), multiselect=True, label="상태 · Status", scale=2,
                                                elem_id=f"{q}-status-filter")
                    self.f_exam = gr.Dropdown(["", *choices["exam"]], value="", label="시험 · Exam", scale=1,
                                              elem_id=f"{q}-exam")
                    self.f_subject = gr.Dropdown(["", *choices["subject"]], value="", label="과목 · Subject",
                                                 scale=1, elem_id=f"{q}-subject")
                with gr.Row(equal_height=True):
                    self.f_flag = gr.Dropdown([("", ""), *[(v, k) for k, v in FLAG_FILTERS.items()]], value="",
                                              label="표시 · Flag", scale=2, elem_id=f"{q}-flag")
                    self.f_assignee = gr.Dropdown(["", *users], value="", label="담당 · Assignee", scale=1,
                                                  elem_id=f"{q}-assignee")
                    self.f_order = order_control(q, self.ctx.order)
            self.guidelines = GuidelinesPanel(self.ctx, q)
            self.shown_filters = gr.State(None)  # the Filters the queue on screen was walked by (bulk acts on it)
            self.progress = gr.HTML(elem_id=f"{q}-progress", elem_classes=["bs-progress-bar"])
            self.preview_toggle()
            self.bulk = BulkPanel(self.ctx, q, users, self.filters, [self.f_status, self.f_exam, self.f_subject,
                                                                      self.f_flag, self.f_assignee, self.f_search],
                                  self.shown_filters, self.progress)
        with gr.Column(elem_classes=["bs-tight"]):
            self.status = gr.HTML(elem_id=f"{q}-status")
            self.draft_note = gr.HTML(elem_id=f"{q}-draft")
            self.conflict = gr.HTML(elem_id=f"{q}-conflict")
        self.no_reason = gr.State("")
        with gr.Row(visible=False) as self.conflict_row:
            self.b_reload = gr.Button("최신으로 다시 불러오기 (내 수정 버림) · Reload latest, drop mine", elem_id=f"{q}-reload")
            self.b_reapply = gr.Button("내 수정을 최신 위에 다시 적용 · Re-apply my edits on the latest",
                                       variant="primary", elem_id=f"{q}-reapply")

    def build_history(self) -> None:
        q = self.queue
        with gr.Accordion("기록 · History", open=False, elem_id=f"{q}-history-box"):
            self.history = gr.HTML(elem_id=f"{q}-history")
            with gr.Row(equal_height=True):
                self.revert_rev = gr.Dropdown([], value=None, label="되돌릴 rev · Revision to bring back", scale=1,
                                              elem_id=f"{q}-revert-rev")
                self.revert_reason = gr.Textbox(label="사유 · Reason", lines=1, scale=3, elem_id=f"{q}-revert-reason")
                self.b_revert_preview = gr.Button("미리 보기 · Preview the revert", scale=1, size="sm",
                                                  elem_id=f"{q}-revert-preview-button")
            self.revert_preview = gr.HTML(elem_id=f"{q}-revert-preview")
            self.b_revert = gr.Button("확인: 되돌리기 (새 rev) · Confirm the revert (as a new revision)", size="sm",
                                      variant="stop", visible=False, elem_id=f"{q}-revert")

    def text_field(self, path: str, label: str, lines: int = 2, **kwargs: Any) -> tuple[Any, Any]:
        element = f"{self.queue}-{path.replace('.', '-')}"
        self.ctx.field_ids[element] = (self.queue, path)
        # one field, its rendered preview under it (shown when it renders math, or when asked for)
        with gr.Column(elem_classes=["bs-field"]) as row:
            box = gr.Textbox(label=label, lines=lines, scale=1, elem_id=element, **kwargs)
            shown = preview("", elem_id=f"{element}-preview")
        self.fields.append((path, box, shown, row))
        return box, shown

    def preview_toggle(self) -> None:
        """Every field's preview, or only those that render math: a class on the tab, set in the page."""
        toggle = gr.Checkbox(False, label="모든 미리보기 · Every preview", container=False,
                             elem_id=f"{self.queue}-previews")
        toggle.change(None, toggle, None, js=f"(on) => {{ document.getElementById('tab-{self.queue}')"
                                             f".classList.toggle('bs-previews-all', on); }}")

    # -- rendering ----------------------------------------------------------------------
    @property
    def outputs(self) -> list[Any]:
        base = [self.state, self.status, self.progress, self.draft_note, self.conflict, self.conflict_row, self.history,
                self.revert_rev, self.revert_preview, self.b_revert]
        fields = [c for _, box, shown, row in self.fields for c in (box, shown, row)]
        return base + fields + [c for editor in self.editors for c in editor.outputs] + self.extra_outputs

    def render(self, view: View, user: str | None, role: str | None = None) -> list[Any]:
        """Every output for the view; `role` (when the tab opens) also makes each field editable or
        read-only as the queue's spec gives that role."""
        view = self.ctx.blinded(view, user)
        shown = view.shown or {}
        spec = QUEUES[self.queue]

        def editable(path: str) -> bool | None:
            return None if role is None else spec.may_edit(role, path)

        item_id = view.session.item_id
        rows = self.ctx.shown_history(item_id, user) if view.stored and item_id is not None else []
        history = views.history_html(rows) if rows else ""
        # the revisions before the one shown, latest first: the control starts at the previous one
        earlier = [(f"rev {r.rev} · {r.stage} · {r.author}", r.rev) for r, _ in reversed(rows)
                   if r.rev < (view.session.rev or 0)]
        revert = [gr.update(choices=earlier, value=earlier[0][1] if earlier else None), "", gr.update(visible=False)]
        values = []
        keys = views.key_numbers(shown.get("answer"))
        for path, _, _, _ in self.fields:
            value = get_path(shown, path)
            present = _slot_exists(shown, path) if view.stored else not path.startswith("options.")
            text = "" if value is None else (value if isinstance(value, str) else
                                             answer_text(value) if path == "answer" else str(value))
            key = _option_number(path) in keys
            interactive = editable(path)
            # update dicts, not gr.Column(...): a component made in a handler costs ~1 ms, a dict nothing
            values += [text if interactive is None else gr.update(value=text, interactive=interactive), to_markdown(text),
                       gr.update(visible=present, elem_classes=["bs-field", "bs-key-field"] if key else ["bs-field"])]
        return [view.session, views.status_html(view), self.ctx.progress.html(self.queue, user), views.draft_html(view.session),
                views.conflict_html(view.conflict), gr.update(visible=view.conflict is not None), history, *revert,
                *values,
                *(c for editor in self.editors
                  for c in editor.render(view.shown if view.stored else None, editable("answer"))),
                *self.extra_render(view)]

    # -- wiring -------------------------------------------------------------------------
    def filters(self, status: list[str] | None, exam: str, subject: str, flag: str, assignee: str, search: str,
                order: str = "id") -> Filters:
        return Filters(tuple(status or ()), exam or None, subject or None, flag or None, assignee or None, search or "",
                       order or "id")

    def wire(self) -> None:
        ctx, q = self.ctx, self.queue
        filter_inputs = [self.f_status, self.f_exam, self.f_subject, self.f_flag, self.f_assignee, self.f_search,
                         self.f_order]

        def navigate(how: Move) -> Callable[..., list[Any]]:
            def handler(session: Session, status: list[str] | None, exam: str, subject: str, flag: str, assignee: str,
                        search: str, order: str, request: gr.Request) -> list[Any]:
                user = ctx.require(request, q)
                filters = self.filters(status, exam, subject, flag, assignee, search, order)
                view = ctx.reviewer.navigate(user, q, filters, session.item_id, how)
                return [*self.render(view, user), queues.walked(ctx.workspace.store.engine, filters)]
            return handler

        moves: list[tuple[gr.Button, Move]] = [(self.b_first, "first"), (self.b_prev, "prev"), (self.b_next, "next"),
                                               (self.b_mine, "unreviewed")]
        moved = [*self.outputs, self.shown_filters]
        for button, how in moves:
            button.click(navigate(how), [self.state, *filter_inputs], moved, api_name=f"{q}_{how}", **fast(self.status))

        def skip(session: Session, status: list[str] | None, exam: str, subject: str, flag: str, assignee: str,
                 search: str, order: str, request: gr.Request) -> list[Any]:
            user = ctx.require(request, q)
            filters = self.filters(status, exam, subject, flag, assignee, search, order)
            return [*self.render(ctx.reviewer.skip(user, session, filters), user),
                    queues.walked(ctx.workspace.store.engine, filters)]

        self.b_skip.click(skip, [self.state, *filter_inputs], moved, api_name=f"{q}_skip", **fast(self.status))
        self.f_search.submit(navigate("first"), [self.state, *filter_inputs], moved, api_visibility="private",
                             **fast(self.status))

        def session_action(name: str) -> Callable[..., list[Any]]:
            def handler(session: Session, request: gr.Request) -> list[Any]:
                user = ctx.require(request, q)
                return self.render(getattr(ctx.reviewer, name)(user, session), user)
            return handler

        self.b_reload.click(session_action("reload"), [self.state], self.outputs, api_visibility="private",
                            **fast(self.status))
        self.b_reapply.click(session_action("reapply"), [self.state], self.outputs, api_visibility="private",
                             **fast(self.status))
        for button, decision, reason in self.decisions:
            self.wire_decision(button, decision, reason)

        def preview_revert(session: Session, rev: int | None, request: gr.Request) -> tuple[str, Any]:
            user = ctx.member(request, q)
            with refused_as_error():
                try:
                    changes = ctx.reviewer.revert_changes(user, session, int(rev or 0))
                except EditError as error:
                    return f'<div class="bs-error">{views.esc(str(error))}</div>', gr.update(visible=False)
            return views.revert_preview_html(int(rev or 0), changes, session.edits), gr.update(visible=bool(changes))

        for event in (self.b_revert_preview.click, self.revert_rev.input):
            event(preview_revert, [self.state, self.revert_rev], [self.revert_preview, self.b_revert],
                  api_visibility="private", **fast(self.revert_preview))

        def revert(session: Session, rev: int | None, reason: str, request: gr.Request) -> list[Any]:
            user = ctx.member(request, q)
            with refused_as_error():
                view = (ctx.reviewer.revert(user, session, int(rev), reason) if rev is not None
                        else ctx.reviewer.view(session, error="되돌릴 rev를 고르세요 · rev: choose a revision"))
            rendered = self.render(view, user.name)
            if view.error:  # refused: the chosen revision, its preview and the confirm button stay for the retry
                at = self.outputs.index(self.revert_rev)
                rendered[at : at + 3] = [gr.skip()] * 3
            return rendered

        self.b_revert.click(revert, [self.state, self.revert_rev, self.revert_reason], self.outputs,
                            api_visibility="private", **fast(self.status))
        for editor in self.editors:
            editor.wire(self)
        for path, box, shown, _ in self.fields:
            # input fires while typing (edit_relay.py makes it fire without key presses too); blur as a backstop
            for event in (box.input, box.blur):
                event(self._edit_handler(path), [self.state, box], [shown, self.draft_note],
                      trigger_mode="always_last", api_visibility="private", **fast(self.draft_note))

    def _edit_handler(self, path: str) -> Callable[..., tuple[Any, ...]]:
        ctx, q = self.ctx, self.queue

        def handler(session: Session, value: str, request: gr.Request) -> tuple[Any, ...]:
            """Keeps the edit in the user's server-side draft. It does not write the session state:
            an edit event finishing after a save must not bring back the revision before it."""
            user = ctx.member(request, q)
            try:
                edited = ctx.reviewer.edit(user, copy.deepcopy(session), path, value)
                note = views.draft_html(edited)
            except (EditError, BenchsmithError) as error:
                note = f'<span class="bs-error">{views.esc(str(error))}</span>'
            return to_markdown(value), note
        return handler

    def wire_decision(self, button: Any, decision: str | None, reason: Any | None) -> None:
        ctx, q = self.ctx, self.queue

        reason = reason if reason is not None else self.no_reason

        def handler(data: dict[Any, Any], request: gr.Request) -> list[Any]:
            user = ctx.member(request, q)
            session = data[self.state]
            try:
                # the form's values, not only the state: a save must not overtake the last keystroke
                if session.item_id is not None:
                    values = {path: data[box] for path, box, _, _ in self.fields}
                    for editor in self.editors:
                        values.update(editor.values_from(data))
                    session = ctx.reviewer.sync(user, session, values)
                view = ctx.reviewer.save(user, session, decision, data[reason] or "")
            except NotAllowed as error:
                # said in the status line, in place of an earlier "Saved as rev N"; every input stays as typed
                refused = ctx.reviewer.view(data[self.state], error=f"저장하지 않았습니다 · Not saved: {error}")
                kept = [gr.skip()] * len(self.outputs)
                kept[self.outputs.index(self.status)] = views.status_html(refused)
                return kept
            ctx.progress.decided(q)
            return self.render(view, user.name)

        # a set: one dict argument
        inputs = {self.state, reason, *(box for _, box, _, _ in self.fields),
                  *(c for editor in self.editors for c in editor.inputs)}
        button.click(handler, inputs, self.outputs, api_visibility="private", **fast(self.status))

    def load(self, user: auth.User) -> list[Any]:
        if user.role not in QUEUES[self.queue].roles:
            return self.render(View(Session(self.queue)), None)
        return self.render(self.ctx.reviewer.resume(user.name, self.queue, self.ctx.order), user.name, user.role)

    @property
    def open_outputs(self) -> list[Any]:
        """What opening the tab fills: the item, the guidelines, the bulk panel (admins only) and the
        decision buttons the user's role has (the server refuses the others in any case)."""
        return [*self.outputs, *self.guidelines.outputs, self.bulk.box, *(button for button, _, _ in self.decisions)]

    def open(self, user: auth.User) -> list[Any]:
        spec = QUEUES[self.queue]
        allowed = spec.decisions_for(user.role)
        buttons = [gr.update(visible=decision is None or decision in allowed) for _, decision, _ in self.decisions]
        return [*self.load(user), *self.guidelines.load(user), gr.Accordion(visible=user.role in spec.bulk_roles),
                *buttons]

    def open_on_select(self, tab: Any) -> None:
        _open_on_select(self.ctx, tab, self.state, lambda session: session.item_id is not None, self.open,
                        self.open_outputs, self.status)


def _slot_exists(record: dict[str, Any], path: str) -> bool:
    parts = path.split(".")
    if parts[0] == "options" and len(parts) > 1 and parts[1].isdigit():
        return int(parts[1]) <= len(record.get("options") or [])
    return True


def _option_number(path: str) -> int | None:
    """N for an option's text field (`options.N.text`)."""
    parts = path.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[0] == "options" and parts[2] == "text" else None


def decision_buttons(tab: ItemQueueTab, reason: Any | None) -> None:
    """Save, then the queue's decisions as its spec names them (their shortcut keys on the label)."""
    with gr.Row(elem_classes=["bs-decisions"]):
        save = gr.Button("저장 · Save (S)", elem_classes=["bs-save"], size="sm", min_width=90, elem_id=f"{tab.queue}-save")
        tab.decisions.append((save, None, reason))
        for decision in QUEUES[tab.queue].decisions:
            variant, css = button_style(decision)
            label = decision.label + (f" ({decision.shortcut})" if decision.shortcut else "")
            button = gr.Button(label, elem_classes=css, variant=variant, size="sm", min_width=90,
                               elem_id=f"{tab.queue}-{decision.name}")
            tab.decisions.append((button, decision.name, reason))


def build_item_queue_tab(ctx: AppContext, queue: str, users: list[str], choices: dict[str, list[str]]) -> ItemQueueTab:
    """An item queue's tab from its spec: navigation, the panel (item_panels.PANELS) beside the spec's
    fields, the reason box and decision buttons in a bar that stays on screen, the history."""
    spec = QUEUES[queue]
    tab = ItemQueueTab(ctx, queue)
    tab.build_navigation(users, choices)
    panel = PANELS.get(queue, Panel)(ctx, tab)
    with gr.Row():
        with gr.Column(scale=panel.side_scale):
            panel.build_side()
        with gr.Column(scale=panel.form_scale):
            for field in spec.fields:
                if field.kind == "key":
                    tab.editors.append(KeyEditor(queue))
                    ctx.field_ids.update({element: (queue, "") for element in tab.editors[-1].text_ids})
                else:
                    tab.text_field(field.path, field.label, lines=field.lines)
            panel.build_form()
            with gr.Column(elem_classes=["bs-actions"], elem_id=f"{queue}-actions"):
                reason = None if spec.reason_label is None else gr.Textbox(
                    show_label=False, container=False, lines=1, placeholder=spec.reason_label, elem_id=f"{queue}-reason")
                decision_buttons(tab, reason)
    tab.build_history()
    tab.extra_outputs, tab.extra_render = panel.outputs, panel.render
    tab.wire()
    panel.wire()
    return tab


class ScoreTab:
    """An item's blind responses side by side, each with its four axes and comment; one Save saves
    every response given a score. Slots are fixed (MAX_SIDE); those an item does not fill are hidden."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.state = gr.State(ScoreSession())
        with gr.Row():
            self.b_prev = gr.Button("◀ 이전 · Previous (P)", size="sm", elem_classes=["bs-prev"], elem_id="score-prev")
            self.b_next = gr.Button("다음 · Next (N) ▶", size="sm", elem_classes=["bs-next"], elem_id="score-next")
            self.b_mine = gr.Button("다음 미채점 · Next unscored", size="sm", variant="primary", elem_id="score-mine")
        self.progress = gr.HTML(elem_id="score-progress")
        self.guidelines = GuidelinesPanel(ctx, "score")
        self.status = gr.HTML(elem_id="score-status")
        with gr.Row():
            with gr.Column(scale=3):
                self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="score-question")
            with gr.Column(scale=2):
                gr.Markdown("**전문가 풀이 (기준) · Expert rationale (reference)**")
                self.reference = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="score-reference")
        with gr.Accordion("채점 기준 · Rubric", open=False, elem_id="score-rubric-box"):
            gr.HTML(views.table_html([{"axis": scoring.AXIS_LABELS[a], "rubric": scoring.rubric_text(a)}
                                      for a in scoring.AXES], [("axis", "축 · Axis"), ("rubric", "1 · 3 · 5")]),
                    elem_id="score-rubric")
        self.slots: list[tuple[Any, Any, Any, list[Any], Any, Any]] = []  # column, label, text, axes, comment, note
        with gr.Row(equal_height=False, elem_id="score-responses"):
            for n in range(1, MAX_SIDE + 1):
                with gr.Column(visible=False, min_width=220, elem_classes=["bs-response"],
                               elem_id=f"score-response-{n}") as column:
                    label = gr.HTML(elem_id=f"score-label-{n}")
                    text = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id=f"score-rationale-{n}")
                    axes = [gr.Radio(["1", "2", "3", "4", "5"], label=scoring.AXIS_LABELS[axis], elem_classes=["bs-axis"],
                                     elem_id=f"score-{n}-{axis}") for axis in scoring.AXES]
                    comment = gr.Textbox(label="의견 · Comment", lines=2, elem_id=f"score-{n}-comment")
                    note = gr.HTML(elem_id=f"score-note-{n}")
                self.slots.append((column, label, text, axes, comment, note))
        self.b_save = gr.Button("점수 저장 · Save scores (S)", variant="primary", elem_classes=["bs-save"],
                                elem_id="score-save")

    @property
    def form(self) -> list[Any]:
        return [c for _, _, _, axes, comment, _ in self.slots for c in (*axes, comment)]

    @property
    def outputs(self) -> list[Any]:
        slots = [c for column, label, text, axes, comment, note in self.slots for c in (column, label, text, *axes, comment, note)]
        return [self.state, self.status, self.progress, self.question, self.reference, *slots]

    def render(self, view: ScoreView, user: str | None) -> list[Any]:
        record = view.stored.item.to_record() if view.stored else None
        reference = ((record or {}).get("rationale") or {}).get("text", "")
        status = "".join([f"<span>{views.esc(view.position)}</span>" if view.position else "",
                          f'<div class="bs-message">{views.esc(view.message)}</div>' if view.message else "",
                          f'<div class="bs-error" role="alert">{views.esc(view.error)}</div>' if view.error else ""])
        responses = view.session.responses
        slots: list[Any] = []
        for n in range(MAX_SIDE):
            if n >= len(responses):
                slots += [gr.update(visible=False), "", "", *([None] * len(scoring.AXES)), "", ""]
                continue
            r = responses[n]
            note = (f'<div class="bs-error" role="alert">{views.esc(r.error)}</div>' if r.error
                    else f'<div class="bs-message">{views.esc(r.note)}</div>' if r.note else "")
            slots += [gr.update(visible=True), f"<h3 class='bs-blind-label'>응답 {views.esc(r.label)}</h3>",
                      to_markdown(r.text), *[_radio(r.values.get(axis)) for axis in scoring.AXES], r.comment, note]
        return [view.session, status, self.ctx.progress.html("score", user), item_markdown(record, with_answer=True),
                to_markdown(reference), *slots]

    def wire(self) -> None:
        ctx = self.ctx

        def navigate(how: ScoreMove) -> Callable[..., list[Any]]:
            def handler(session: ScoreSession, request: gr.Request) -> list[Any]:
                user = ctx.require(request, "score")
                return self.render(ctx.desk.navigate(user, session.screen, how), user)
            return handler

        score_moves: list[tuple[gr.Button, ScoreMove]] = [(self.b_prev, "prev"), (self.b_next, "next"),
                                                          (self.b_mine, "unscored")]
        for button, how in score_moves:
            button.click(navigate(how), [self.state], self.outputs, api_visibility="private", **fast(self.status))
        for slot, (_, _, _, axes, comment, _) in enumerate(self.slots):
            for axis, radio in zip(scoring.AXES, axes, strict=True):
                radio.input(self._edit(slot, axis), [self.state, radio], None, api_visibility="private", queue=False)
            comment.input(self._edit(slot, "comment"), [self.state, comment], None,
                          trigger_mode="always_last", api_visibility="private", queue=False)

        def save(data: dict[Any, Any], request: gr.Request) -> list[Any]:
            user = ctx.require(request, "score")
            session = data[self.state]
            for response, (_, _, _, axes, comment, _) in zip(session.responses, self.slots, strict=False):
                # the form's values, not only the drafts: a save must not overtake the last click
                response.values.update({a: data[radio] for a, radio in zip(scoring.AXES, axes, strict=True)
                                        if data[radio] is not None})
                response.comment = data[comment] or ""
            view = ctx.desk.save(user, session)
            ctx.progress.decided("score")
            return self.render(view, user)

        self.b_save.click(save, {self.state, *self.form}, self.outputs, api_visibility="private", **fast(self.status))

    def _edit(self, slot: int, axis: str) -> Callable[..., None]:
        def handler(session: ScoreSession, value: Any, request: gr.Request) -> None:
            """Keeps the score in the expert's draft (not in the state; see ItemQueueTab._edit_handler)."""
            self.ctx.desk.edit(self.ctx.require(request, "score"), copy.deepcopy(session), slot, axis, value)
        return handler

    def load(self, user: auth.User) -> list[Any]:
        if user.role not in QUEUES["score"].roles:
            return self.render(ScoreView(ScoreSession()), None)
        return self.render(self.ctx.desk.resume(user.name), user.name)

    def open_on_select(self, tab: Any) -> None:
        _open_on_select(self.ctx, tab, self.state, lambda session: session.screen is not None,
                        lambda user: [*self.load(user), *self.guidelines.load(user)],
                        [*self.outputs, *self.guidelines.outputs], self.status)


def _open_on_select(ctx: AppContext, tab: Any, state: Any, is_open: Callable[[Any], bool],
                    open_tab: Callable[[auth.User], list[Any]], outputs: list[Any], progress_on: Any) -> None:
    """A tab other than the first fills when first selected, not at login (less work for the
    server and the page then). Selected again, it keeps what is on screen, edits included."""
    def handler(session: Any, request: gr.Request) -> list[Any]:
        user = ctx.user(request)
        return [gr.skip()] * len(outputs) if is_open(session) else open_tab(user)

    tab.select(handler, [state], outputs, api_visibility="private", **fast(progress_on))


def _radio(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


AGREEMENT_COLUMNS = [("raters", "평가자 · Raters"), ("axis", "축 · Axis"), ("alpha_interval", "α interval"),
                     ("alpha_ordinal", "α ordinal"), ("icc_2_1", "ICC(2,1)"), ("units", "units (≥2 ratings)")]


DECISION_AGREEMENT_COLUMNS = [("what", "무엇 · What"), ("kappa_kind", "κ"), ("kappa", "κ value"),
                              ("alpha_nominal", "α nominal"), ("items", "items (≥2 decisions)"), ("pairs", "pairs"),
                              ("raters", "raters")]


def stats_html(ctx: AppContext) -> str:
    engine = ctx.workspace.store.engine
    counts = ctx.workspace.store.stats()
    queue_counts = [{"queue": q, "items": queues.count(engine, q, Filters())} for q in queues.ITEM_QUEUES]
    queue_counts.append({"queue": "score", "items": len(scoring.tasks(engine))})
    try:
        queue_counts.append({"queue": "suspects", "items": len(ctx.suspects.membership().open)})
    except BenchsmithError:
        pass  # a suspects.json that is not a result: the tab says so
    queue_counts.append({"queue": "verdicts", "items": verdicts_count(engine)[0]})
    agreement = [row.__dict__ for row in stats.agreement_rows(engine)]
    decision_agreement = [row.__dict__ for row in stats.decision_agreement_rows(engine)]
    return (f"<h3>문항 · Items</h3><p>{counts['items']} items, {counts['revisions']} revisions · "
            + " · ".join(f"{views.esc(k)} {v}" for k, v in counts["by_status"].items()) + "</p>"
            + views.table_html(queue_counts, [("queue", "대기열 · Queue"), ("items", "문항 · Items")])
            + "<h3>진행 · Progress per user and queue</h3>" + views.table_html(stats.progress_rows(engine), PROGRESS_COLUMNS)
            + "<h3>채점 일치도 · Scoring agreement</h3>" + views.table_html(agreement, AGREEMENT_COLUMNS)
            + "<h3>검토자 일치도 · Reviewers' agreement (overlapped items)</h3>"
            + views.table_html(decision_agreement, DECISION_AGREEMENT_COLUMNS)
            + verdict_stats_html(VerdictDesk(ctx.workspace))
            + _judge_html(engine))


JUDGE_ITEM_COLUMNS = [("axis", "축 · Axis"), ("against", "판정 모델 대비 · Judge vs"),
                      ("alpha_interval", "α interval"), ("icc_2_1", "ICC(2,1)"), ("units", "units")]
JUDGE_MODEL_COLUMNS = [("axis", "축 · Axis"), ("tau_b", "Kendall τb"), ("ci", "95% CI"), ("models", "models")]


def _judge_html(engine: Any) -> str:
    result = stats.judge_meta_evaluation(engine)
    if result is None:
        return "<p>판정 모델 검증: 전문가 점수와 판정 모델 점수가 모두 필요합니다 · Judge meta-evaluation needs expert and judge scores.</p>"
    models = [m.__dict__ | {"ci": "—" if m.ci is None else f"[{m.ci[0]:+.2f}, {m.ci[1]:+.2f}]"} for m in result.models]
    return ("<h3>판정 모델 검증 · Judge vs experts</h3>"
            + f"<p>{result.units} units; {result.judge_missing} without a judge score (left out, never 0)</p>"
            + views.table_html([r.__dict__ for r in result.items], JUDGE_ITEM_COLUMNS)
            + views.table_html(models, JUDGE_MODEL_COLUMNS))


def build_app(ctx: AppContext) -> gr.Blocks:
    """Two pages (annotator/screens/pages.py): `/` the review queues, `/expert` the experts' and admins' tabs."""
    engine = ctx.workspace.store.engine
    users = [user.name for user in auth.list_users(engine)]
    choices = filter_choices(engine)
    with gr.Blocks(title="benchsmith 검토 · annotator") as blocks:
        build_review_page(ctx, blocks, users, choices)
    with blocks.route(EXPERT_TITLE, EXPERT_PATH):
        build_expert_page(ctx, blocks, users)
        # the scripts' endpoints: gradio_client reads the whole app's API, whatever their page;
        # here their description stays out of the page every annotator loads
        _register_api(ctx)
    return blocks


def _hidden_unless(allowed: list[bool]) -> list[Any]:
    # visible=False does not hide a tab button in this Gradio; "hidden" does. Tabs shown
    # anyway get no update: a visibility update makes the page walk the whole tab.
    return [gr.skip() if ok else gr.Tab(visible="hidden") for ok in allowed]


REVIEW_QUEUES = tuple(name for name, spec in QUEUES.items() if spec.page == "review")  # their order: the tabs'


def build_review_page(ctx: AppContext, blocks: gr.Blocks, users: list[str], choices: dict[str, list[str]]) -> None:
    """One tab per item queue whose spec puts it on this page; the first (every role has it) opens at
    login, the others when first selected."""
    header = PageHeader(ctx.local_mode)
    tabs: dict[str, Any] = {}
    built: dict[str, ItemQueueTab] = {}
    with gr.Tabs():
        for queue in REVIEW_QUEUES:
            with gr.Tab(QUEUES[queue].title, id=queue, elem_id=f"tab-{queue}") as tabs[queue]:
                built[queue] = build_item_queue_tab(ctx, queue, users, choices)
    first, *others = REVIEW_QUEUES
    for queue in others:
        built[queue].open_on_select(tabs[queue])

    def on_load(request: gr.Request) -> list[Any]:
        """At login: who, which tabs this role sees, and the first tab."""
        user = ctx.user(request)
        visible = _hidden_unless([user.role in QUEUES[q].roles for q in others])
        return [header.load(user), *visible, *built[first].open(user)]

    blocks.load(on_load, None, [header.who, *(tabs[q] for q in others), *built[first].open_outputs],
                api_visibility="private", **fast(header.who))


EXPERT_QUEUES = tuple(name for name, spec in QUEUES.items() if spec.page == "expert")  # their order: the tabs'


def _expert_screen(ctx: AppContext, queue: str) -> tuple[Any, Callable[[Any], None]]:
    """A queue's screen on the expert page (made where called) and what fills it when its tab is
    first selected. The screens are the queues' panels: each queue's layout is its own."""
    if queue == "score":
        score = ScoreTab(ctx)
        score.wire()
        return score, score.open_on_select
    if queue == "verdicts":
        verdicts = VerdictsTab(ctx, item_markdown)
        return verdicts, verdicts.open_on_select
    if queue == "suspects":
        suspects = SuspectsTab(ctx, item_markdown)
        return suspects, lambda tab: _open_on_select(ctx, tab, suspects.state, lambda session: session.item_id is not None,
                                                     suspects.open, suspects.open_outputs, suspects.status)
    if queue == "adjudicate":
        adjudicate = AdjudicateTab(ctx, item_markdown, lambda record: views.page_html(
            record, page_info(ctx, record.get("source") or {})))
        # read again at each select: reviewers' decisions add disputed items meanwhile
        return adjudicate, lambda tab: _open_on_select(ctx, tab, adjudicate.state, lambda case: False, adjudicate.open,
                                                       adjudicate.outputs, adjudicate.status)
    raise ValueError(f"no screen for the {queue} queue on the expert page")


def build_expert_page(ctx: AppContext, blocks: gr.Blocks, users: list[str]) -> None:
    """One tab per queue whose spec puts it on this page, then admin and stats."""
    header = PageHeader(ctx.local_mode)
    nothing_here = gr.Markdown("이 페이지는 전문가와 관리자용입니다 · This page is for experts and admins: "
                               f"[{REVIEW_TITLE}](./)", visible=False, elem_id="expert-none")
    tabs: dict[str, Any] = {}
    screens: dict[str, Any] = {}
    with gr.Tabs():
        for queue in EXPERT_QUEUES:
            with gr.Tab(QUEUES[queue].title, id=queue, elem_id=f"tab-{queue}") as tabs[queue]:
                screens[queue], opens = _expert_screen(ctx, queue)
            opens(tabs[queue])
        with gr.Tab("관리 · Admin", id="admin", elem_id="tab-admin") as tabs["admin"]:
            admin_tab = AdminTab(ctx, users)
        with gr.Tab("통계 · Stats", id="stats", elem_id="tab-stats") as tabs["stats"]:
            refresh = gr.Button("새로 고침 · Refresh", size="sm", elem_id="stats-refresh")
            stats_view = gr.HTML(elem_id="stats")

    def refresh_stats(request: gr.Request) -> str:
        ctx.sees_stats(request)
        return stats_html(ctx)

    refresh.click(refresh_stats, None, stats_view, api_visibility="private", **fast(stats_view))
    # counted when the tab is opened, not at page load: on 50,000 items they cost a second
    tabs["stats"].select(refresh_stats, None, stats_view, api_visibility="private", **fast(stats_view))

    def open_admin(request: gr.Request) -> list[Any]:
        return admin_tab.load() if ctx.user(request).role == "admin" else ["", ""]

    tabs["admin"].select(open_admin, None, admin_tab.outputs, api_visibility="private", **fast(admin_tab.note))

    hideable = (*EXPERT_QUEUES, "admin", "stats")
    score_tab = screens["score"]
    first_tab = [*score_tab.outputs, *score_tab.guidelines.outputs]

    def on_load(request: gr.Request) -> list[Any]:
        """Who, which tabs this role sees, and the first tab (scoring) for those who score."""
        user = ctx.user(request)
        allowed = ([user.role in QUEUES[q].roles for q in EXPERT_QUEUES]
                   + [user.role == "admin", user.role in STATS_ROLES])
        scores = user.role in QUEUES["score"].roles
        opened = [*score_tab.load(user), *score_tab.guidelines.load(user)] if scores else [gr.skip()] * len(first_tab)
        return [header.load(user), gr.Markdown(visible=not any(allowed)), *_hidden_unless(allowed), *opened]

    blocks.load(on_load, None, [header.who, nothing_here, *(tabs[t] for t in hideable), *first_tab],
                api_visibility="private", **fast(header.who))


def _item_queue(queue: str) -> str:
    if queue not in queues.ITEM_QUEUES:
        raise gr.Error(f"없는 대기열입니다 · unknown item queue {queue!r}: choose one of {', '.join(queues.ITEM_QUEUES)}")
    return queue


def _outcome(view: View) -> dict:
    """A save's or revert's View as a script's answer: {"status": "saved"|"conflict"|"invalid", "rev", "message", "since"}."""
    if view.conflict is not None:
        return {"status": "conflict", "rev": view.conflict.current_rev, "message": view.conflict.message,
                "since": view.conflict.since}
    if view.error:
        return {"status": "invalid", "rev": view.session.rev, "message": view.error, "since": []}
    return {"status": "saved", "rev": view.session.rev, "message": view.message, "since": []}


def _register_api(ctx: AppContext) -> None:
    """Endpoints for scripts (gradio_client): read an item, save edits, save scores."""
    import json

    def get_item(item_id: str, queue: str = "item", request: gr.Request | None = None) -> dict:
        """The current revision of an item: {"rev", "item", "reserved_by"} (who is working on it in `queue`)."""
        user = ctx.user(request)
        stored = ctx.workspace.store.get(item_id)
        record = stored.item.to_record()
        hidden = ctx.hidden_authors(item_id, user.name)
        if hidden and record.get("rationale"):
            record["rationale"] = blinding.scrub(record["rationale"], hidden)
        holder = claims.holder(ctx.workspace.store.engine, queue, item_id)
        return {"rev": stored.rev, "item": record, "reserved_by": holder.user if holder else None}

    def save_item(queue: str, item_id: str, expect_rev: int, changes_json: str, decision: str = "",
                  reason: str = "", request: gr.Request | None = None) -> dict:
        """Save field edits {"dotted.path": value} made on `expect_rev`, with an optional decision.
        Returns {"status": "saved"|"conflict"|"invalid", "rev", "message", "since"}."""
        user = ctx.member(request, queue) if queue in QUEUES else None
        if user is None:
            return {"status": "invalid", "rev": None, "message": f"unknown queue {queue!r}", "since": []}
        try:
            edits = json.loads(changes_json or "{}")
            if not isinstance(edits, dict):
                raise ValueError("changes must be a JSON object")
        except ValueError as error:
            return {"status": "invalid", "rev": None, "message": f"changes_json: {error}", "since": []}
        with refused_as_error():
            view = ctx.reviewer.save(user, Session(queue, item_id, int(expect_rev), edits), decision or None, reason)
        return _outcome(view)

    def revert_preview(queue: str, item_id: str, expect_rev: int, rev: int, request: gr.Request | None = None) -> dict:
        """What reverting `item_id` (seen at `expect_rev`) to revision `rev` would change, for your role
        in `queue`: {"fields": [{"field", "now", "then"}]} (only the fields that role may edit there)."""
        user = ctx.member(request, _item_queue(queue))
        with refused_as_error():
            try:
                changes = ctx.reviewer.revert_changes(user, Session(queue, item_id, int(expect_rev)), int(rev))
            except EditError as error:
                raise gr.Error(str(error)) from None
        return {"fields": [{"field": path, "now": now, "then": then} for path, now, then in changes]}

    def revert_item(queue: str, item_id: str, expect_rev: int, rev: int, reason: str,
                    request: gr.Request | None = None) -> dict:
        """Bring back the fields revert_preview lists, as a new revision; same answer as save_item."""
        user = ctx.member(request, _item_queue(queue))
        with refused_as_error():
            view = ctx.reviewer.revert(user, Session(queue, item_id, int(expect_rev)), int(rev), reason)
        return _outcome(view)

    def score_responses(item_id: str, request: gr.Request) -> dict:
        """This expert's view of an item's blind responses: [{"label", "rationale", "rev", "scores",
        "comment"}] in their blind order (no model, run or task id)."""
        user = ctx.require(request, "score")
        responses = [r for screen in ctx.desk.screens(user) if screen.item_id == item_id
                     for r in ctx.desk.open(user, screen.key).session.responses]
        return {"item_id": item_id, "responses": [{"label": r.label, "rationale": r.text, "rev": r.rev,
                                                   "scores": r.values, "comment": r.comment} for r in responses]}

    def save_score(item_id: str, label: str, expect_rev: int, factuality: int, logic: int, depth: int, clarity: int,
                   comment: str = "", request: gr.Request | None = None) -> dict:
        """Save this expert's four scores (1–5) for response `label` (A, B, …) of an item, made on
        `expect_rev` (0 = first)."""
        user = ctx.require(request, "score")
        values = {"factuality": factuality, "logic": logic, "depth": depth, "clarity": clarity}
        view = ctx.desk.save_by_label(user, item_id, label, values, comment, int(expect_rev))
        response = view.session.responses[0] if view.session.responses else None
        status = "conflict" if view.conflict else ("invalid" if view.error else "saved")
        return {"status": status, "rev": response.rev if response else None,
                "message": (response.error or response.note) if response else view.error}

    def break_reservation(queue: str, item_id: str, request: gr.Request | None = None) -> dict:
        """Admins: end whoever's reservation of `item_id` in `queue` (recorded). {"released": holder or None}."""
        user = ctx.user(request)
        with refused_as_error():
            return {"released": claims.break_reservation(ctx.workspace.store.engine, user, queue, item_id)}

    for endpoint in (get_item, save_item, score_responses, save_score, revert_preview, revert_item, break_reservation):
        gr.api(endpoint, api_name=endpoint.__name__, concurrency_limit=API_CONCURRENCY)
    register_adjudicate_api(ctx, API_CONCURRENCY)
