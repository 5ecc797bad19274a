"""The Suspects tab: one screen per suspect item with its evidence (counts only, no model
names) and the four decisions. Layout and wiring; the rules live in annotator/review/suspects.py.
Every handler checks the user's role on the server (`ctx.require`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from annotator.review.actions import Session, View, answer_text, key_options
from annotator.review.queue_specs import QUEUES, NotAllowed, button_style
from annotator.review.suspects import QUEUE, Membership, SuspectError, SuspectMove
from annotator.screens import views
from annotator.screens.events import fast
from annotator.screens.guidelines_panel import GuidelinesPanel
from annotator.screens.preview import LATEX_DELIMITERS
from curation.core.errors import BenchsmithError, ConflictError, NotFoundError
from curation.core.item import ItemValidationError
from curation.core.store import StoredItem
from evaluation.filter_records import Suspect


@dataclass
class SuspectSession:
    item_id: str | None = None
    rev: int | None = None  # the revision the reviewer sees
    fingerprint: str | None = None  # the analysis they see


@dataclass
class SuspectView:
    session: SuspectSession
    membership: Membership
    stored: StoredItem | None = None
    suspect: Suspect | None = None
    message: str = ""
    error: str = ""
    conflict: ConflictError | None = None
    saved: bool = False
    kept_inputs: bool = False  # a refused decision on the item shown: the form stays as the reviewer left it


def _answer_rows(suspect: Suspect) -> tuple[str, str]:
    """An open item's evidence: the models per answer (normalised by its format), the key's first."""
    answers = [suspect.key_answer or "", *(a for a in suspect.answer_counts if a != suspect.key_answer)]
    rows = []
    for answer in answers:
        marks = (["<b>정답 · key</b>"] if answer == suspect.key_answer else []) + (
            ["합의 · consensus"] if answer == suspect.consensus_answer else [])
        rows.append(f'<tr data-answer="{views.esc(answer)}"><td>{views.esc(answer)}</td><td>{" · ".join(marks)}</td>'
                    f'<td class="bs-count-all">{suspect.answer_counts.get(answer, 0)}</td>'
                    f'<td class="bs-count-strong">{suspect.answer_counts_strong.get(answer, 0)}</td></tr>')
    return "답 · Answer", "".join(rows)


def evidence_html(suspect: Suspect, options: int, key: Any) -> str:
    """Counts per option or answer (all models, strongest third), the consensus and the signals.
    No model names."""
    keys = set(key_options(key) or [])
    strong_total = sum(suspect.option_counts_strong.values()) + sum(suspect.answer_counts_strong.values())
    rows = []
    for n in range(1, max(options, len(suspect.option_counts)) + 1):
        marks = (["<b>정답 · key</b>"] if n in keys else []) + (
            ["합의 · consensus"] if n == suspect.consensus_option else [])
        rows.append(f'<tr data-option="{n}"><td>{n}</td><td>{" · ".join(marks)}</td>'
                    f'<td class="bs-count-all">{suspect.option_counts.get(str(n), 0)}</td>'
                    f'<td class="bs-count-strong">{suspect.option_counts_strong.get(str(n), 0)}</td></tr>')
    heading = "보기 · Option"
    if suspect.key_answer is not None:
        heading, answer_rows = _answer_rows(suspect)
        rows = [answer_rows]

    def figure(value: float | None, digits: int = 2) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    shown = suspect.consensus_shown()
    consensus = "—" if shown is None else f"{shown} (posterior {figure(suspect.consensus_posterior)})"
    return (f'<div class="bs-suspect" data-score="{suspect.score}">'
            f"<p><b>점수 · Score</b> {suspect.score:.3f} · <b>P(key wrong)</b> "
            f'<span id="suspects-key-wrong">{figure(suspect.key_wrong_posterior)}</span> · '
            f"<b>합의 · Consensus</b> {views.esc(consensus)} · "
            f"<b>변별도 · Discrimination</b> {figure(suspect.discrimination)}"
            + (f" (interval top {figure(suspect.discrimination_high)})" if suspect.discrimination_high is not None else "")
            + f" · <b>정답률 · Share correct</b> {figure(suspect.share_correct)} · {suspect.n} models answered</p>"
            f"<table class='bs-table bs-option-counts'><tr><th>{heading}</th><th>표시 · Mark</th>"
            f"<th>모든 모델 · All models</th><th>상위 1/3 · Strongest third ({strong_total})</th></tr>"
            + "".join(rows) + "</table>"
            + views.reasons_html("근거 · Reasons", suspect.reasons) + "</div>")


def _consensus_choice(suspect: Suspect | None, choices: list[tuple[str, str]]) -> str | None:
    """The option (or open answer) the models agree on, when Fix key offers it: pre-selected."""
    if suspect is None:
        return None
    wanted = suspect.consensus_answer if suspect.key_answer is not None else (
        None if suspect.consensus_option is None else str(suspect.consensus_option))
    return wanted if any(value == wanted for _, value in choices) else None


def _key_choices(suspect: Suspect | None, options: int) -> list[tuple[str, str]]:
    """What Fix key offers: the option numbers, or an open item's answers the models gave."""
    if suspect is not None and suspect.key_answer is not None:
        return [(answer, answer) for answer in suspect.answer_counts if answer != suspect.key_answer]
    return [(str(n), str(n)) for n in range(1, options + 1)]


class SuspectsTab:
    def __init__(self, ctx: Any, question_markdown: Callable[..., str]):
        self.ctx, self.question_markdown = ctx, question_markdown
        self.state = gr.State(SuspectSession())
        with gr.Row(equal_height=True, elem_classes=["bs-navrow"]):
            self.search = gr.Textbox(show_label=False, container=False, placeholder="문항 ID · Item id", scale=2,
                                     elem_id="suspects-search")
            self.b_first = gr.Button("찾기 · Find", size="sm", scale=0, min_width=70, elem_id="suspects-find")
            self.b_prev = gr.Button("◀ 이전 · Previous (P)", size="sm", scale=0, min_width=120, elem_classes=["bs-prev"],
                                    elem_id="suspects-prev")
            self.b_next = gr.Button("다음 · Next (N) ▶", size="sm", scale=0, min_width=120, elem_classes=["bs-next"],
                                    elem_id="suspects-next")
            self.b_mine = gr.Button("내 다음 미결정 · Next undecided for me", size="sm", scale=0, min_width=200,
                                    variant="primary", elem_id="suspects-mine")
        self.summary = gr.HTML(elem_id="suspects-summary")
        self.guidelines = GuidelinesPanel(ctx, QUEUE)
        self.status = gr.HTML(elem_id="suspects-status")
        self.conflict = gr.HTML(elem_id="suspects-conflict")
        self.b_reload = gr.Button("최신으로 다시 불러오기 · Reload the latest", size="sm", visible=False,
                                  elem_id="suspects-reload")
        with gr.Row():
            with gr.Column(scale=5):
                self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="suspects-question")
                self.partners = gr.HTML(elem_id="suspects-partners")
            with gr.Column(scale=6):
                self.evidence = gr.HTML(elem_id="suspects-evidence")
                # the decision stays on screen at the foot of the column, as the item tab's (views.CSS)
                with gr.Column(elem_classes=["bs-actions"], elem_id="suspects-actions"):
                    self.new_key = gr.Radio([], label="새 정답 (정답 수정 시) · New key (for Fix key)",
                                            elem_id="suspects-new-key")
                    self.reason = gr.Textbox(label="사유 (유지 외 필수) · Reason (needed for all but keep)", lines=1,
                                             elem_id="suspects-reason")
                    self.buttons = {}
                    with gr.Row(elem_classes=["bs-decisions"]):
                        for decision in QUEUES[QUEUE].decisions:  # from the queue's spec, as every queue's buttons
                            variant, css = button_style(decision)
                            self.buttons[decision.name] = gr.Button(decision.label, variant=variant, elem_classes=css,
                                                                    elem_id=f"suspects-{decision.name}", size="sm")
        with gr.Accordion("기록 · History", open=False, elem_id="suspects-history-box"):
            self.history = gr.HTML(elem_id="suspects-history")
        self.wire()

    # -- rendering ----------------------------------------------------------------------
    @property
    def outputs(self) -> list[Any]:
        return [self.state, self.summary, self.status, self.conflict, self.b_reload, self.question, self.partners,
                self.evidence, self.new_key, self.reason, self.history]

    def render(self, view: SuspectView) -> list[Any]:
        session, stored, suspect = view.session, view.stored, view.suspect
        shown = View(Session(QUEUE, session.item_id, session.rev), stored, None, view.message, view.error)
        conflict = ""
        if view.conflict is not None:
            since = "".join(f"<li>{views.esc(line)}</li>" for line in view.conflict.since)
            conflict = (f'<div class="bs-conflict"><b>충돌 · Conflict</b>: {views.esc(str(view.conflict))}'
                        f"<ul>{since}</ul></div>")
        if stored is None:
            return [session, view.membership.summary(views.local_time, views.esc), views.status_html(shown), conflict,
                    gr.update(visible=view.conflict is not None), "", "", "", gr.update(choices=[], value=None),
                    gr.skip(), ""]
        record = stored.item.to_record()
        options = len(stored.item.options)
        evidence = (evidence_html(suspect, options, stored.item.answer) if suspect is not None else
                    '<div class="bs-note">이 문항은 현재 분석의 의심 문항이 아닙니다 · Not a suspect in the current analysis</div>')
        history = views.history_html(self.ctx.reviewer.history(stored.item.id))
        choices = _key_choices(suspect, options)
        # a refused decision keeps what the reviewer chose (the new key, the reason) for the retry
        new_key = (gr.skip() if view.kept_inputs else
                   gr.update(choices=choices, value=_consensus_choice(suspect, choices)))
        return [session, view.membership.summary(views.local_time, views.esc), views.status_html(shown), conflict,
                gr.update(visible=view.conflict is not None), self.question_markdown(record, with_answer=True),
                self.partners_html(suspect), evidence,
                new_key, "" if view.saved else gr.skip(), history]

    def partners_html(self, suspect: Suspect | None) -> str:
        if suspect is None or not suspect.conflict_partners:
            return ""
        rows = []
        for partner in suspect.conflict_partners:
            try:
                item = self.ctx.workspace.store.get(partner).item
            except NotFoundError:
                rows.append(f"<li><code>{views.esc(partner)}</code>: not in the store</li>")
                continue
            stem = item.stem if len(item.stem) <= 120 else item.stem[:119] + "…"
            rows.append(f'<li class="bs-partner" data-item="{views.esc(partner)}"><code>{views.esc(partner)}</code> · '
                        f"key {views.esc(answer_text(item.answer))} · {views.esc(item.status)}: {views.esc(stem)}</li>")
        return f"<div><b>중복 충돌 상대 · Dedup conflict partner</b> (the same question, another key)<ul>{''.join(rows)}</ul></div>"

    # -- what the handlers do -----------------------------------------------------------
    def view(self, item_id: str | None, message: str = "", error: str = "", conflict: ConflictError | None = None,
             saved: bool = False) -> SuspectView:
        desk = self.ctx.suspects
        found = desk.membership()
        if item_id is None:
            return SuspectView(SuspectSession(), found, message=message or _empty(found), error=error)
        stored = self.ctx.workspace.store.get(item_id)
        loaded = found.loaded
        suspect = next((s for s in loaded.result.suspects if s.item_id == item_id), None) if loaded else None
        if suspect is not None and suspect.content_hash not in (None, stored.content_hash):
            message = (message + " " if message else "") + (
                "이 문항은 분석 뒤에 바뀌었습니다 · This item changed since the analysis: its evidence is stale")
        session = SuspectSession(item_id, stored.rev, loaded.fingerprint if loaded else None)
        return SuspectView(session, found, stored, suspect, message, error, conflict, saved)

    def move(self, user: str, session: SuspectSession, how: SuspectMove, search: str = "") -> SuspectView:
        search = (search or "").strip()
        if how == "first" and search:
            loaded = self.ctx.suspects.file.load()
            if loaded is not None and any(s.item_id == search for s in loaded.result.suspects):
                return self.view(search)
            return self.view(session.item_id, error=f"{search!r}: not among the suspects of the current analysis")
        found = self.ctx.suspects.navigate(user, session.item_id, how)
        if found is None:
            empty = {"unreviewed": "결정할 의심 문항이 없습니다 · No suspect left for you to decide",
                     "next": "마지막 의심 문항입니다 · This is the last suspect",
                     "prev": "첫 의심 문항입니다 · This is the first suspect",
                     "first": "의심 문항이 없습니다 · No open suspects"}[how]
            return self.view(session.item_id if session.item_id and self._exists(session.item_id) else None, empty)
        return self.view(found)

    def decide(self, user: Any, session: SuspectSession, decision: str, new_key: Any, reason: str) -> SuspectView:
        if session.item_id is None or session.rev is None or session.fingerprint is None:
            return self.view(None, error="먼저 의심 문항을 여세요 · Open a suspect first")
        try:
            outcome = self.ctx.suspects.decide(user, session.item_id, session.rev, session.fingerprint, decision,
                                               reason, new_key)
        except ConflictError as error:
            view = self.view(session.item_id, error="다른 사람이 먼저 저장했습니다 · Someone saved this item after you "
                             "opened it: nothing was saved; reload to see the latest", conflict=error)
            view.session = session  # keep the revision the reviewer saw until they reload
            return view
        except (SuspectError, ItemValidationError, NotAllowed) as error:
            view = self.view(session.item_id, error=f"저장하지 않았습니다 · Not saved: {error}")
            view.session, view.kept_inputs = session, True
            return view
        return self.view(session.item_id, outcome.message, saved=True)

    def _exists(self, item_id: str) -> bool:
        try:
            self.ctx.workspace.store.get(item_id)
        except NotFoundError:
            return False
        return True

    # -- wiring -------------------------------------------------------------------------
    def navigate_handler(self, how: SuspectMove) -> Callable[..., list[Any]]:
        def handler(session: SuspectSession, search: str, request: gr.Request) -> list[Any]:
            user = self.ctx.require(request, QUEUE)
            try:
                return self.render(self.move(user, session, how, search))
            except BenchsmithError as error:  # e.g. a suspects.json that is not a result
                return self.render(SuspectView(session, Membership(None), error=str(error)))
        return handler

    def decision_handler(self, decision: str) -> Callable[..., list[Any]]:
        def handler(session: SuspectSession, new_key: Any, reason: str, request: gr.Request) -> list[Any]:
            user = self.ctx.member(request, QUEUE)  # with the role: assignments are checked on the decision
            view = self.decide(user, copy.copy(session), decision, new_key, reason or "")
            self.ctx.progress.decided(QUEUE)
            return self.render(view)
        return handler

    def reload_handler(self, session: SuspectSession, request: gr.Request) -> list[Any]:
        self.ctx.require(request, QUEUE)
        return self.render(self.view(session.item_id, "최신 revision을 불러왔습니다 · Reloaded the latest revision"))

    def wire(self) -> None:
        moves: list[tuple[Any, SuspectMove]] = [(self.b_first, "first"), (self.b_prev, "prev"), (self.b_next, "next"),
                                                (self.b_mine, "unreviewed")]
        for button, how in moves:
            button.click(self.navigate_handler(how), [self.state, self.search], self.outputs,
                         api_visibility="private", **fast(self.status))
        self.search.submit(self.navigate_handler("first"), [self.state, self.search], self.outputs,
                           api_visibility="private", **fast(self.status))
        for decision, button in self.buttons.items():
            button.click(self.decision_handler(decision), [self.state, self.new_key, self.reason], self.outputs,
                         api_visibility="private", **fast(self.status))
        self.b_reload.click(self.reload_handler, [self.state], self.outputs, api_visibility="private",
                            **fast(self.status))

    def open(self, user: Any) -> list[Any]:
        """Opening the tab: the first suspect for this user (their assigned ones first when the
        queue has assignments), and the guidelines."""
        if user.role not in QUEUES[QUEUE].roles:
            return [*self.render(SuspectView(SuspectSession(), Membership(None))), *self.guidelines.load(user)]
        try:
            view = self.move(user.name, SuspectSession(), "unreviewed")
        except BenchsmithError as error:
            view = SuspectView(SuspectSession(), Membership(None), error=str(error))
        return [*self.render(view), *self.guidelines.load(user)]

    @property
    def open_outputs(self) -> list[Any]:
        return [*self.outputs, *self.guidelines.outputs]


def _empty(found: Membership) -> str:
    if found.loaded is None:
        return found.summary()
    return "" if found.open else "결정할 의심 문항이 없습니다 · No open suspects"
