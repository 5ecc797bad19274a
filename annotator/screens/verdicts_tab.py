"""The Verdicts tab (experts and admins): one response at a time — the question with its images and
the key, the whole response (scrollable, a repeated loop folded and marked), the answer read from
it and who decided what — and the reviewer's verdict: correct / incorrect / no answer, whether the
answer was read right, and for an incorrect one why (the workspace's error taxonomy). Admins settle
the responses whose reviewers differ (*Next disputed*, *Settle as lead*).

Layout and wiring; the rules live in annotator/review/verdicts.py. Every handler checks the user's role on
the server (`ctx.member`), and deciding checks the assignment there too. No model, run or task id
reaches the page: the task on screen is server-side state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from annotator.review import claims, verdicts
from annotator.review.queue_specs import ADMIN, QUEUES, NotAllowed
from annotator.review.verdicts import QUEUE, Task, VerdictDesk, VerdictError, VerdictMove, Vote
from annotator.screens import views
from annotator.screens.events import fast
from annotator.screens.guidelines_panel import GuidelinesPanel
from annotator.screens.preview import LATEX_DELIMITERS
from annotator.screens.response_view import response_html
from curation.core.errors import BenchsmithError, NotFoundError
from evaluation.human_verdicts import VERDICT_LABELS, VERDICTS

EXTRACTION = {"right": True, "wrong": False}
EXTRACTION_CHOICES = [("맞게 읽음 · read right", "right"), ("잘못 읽음 · read wrong", "wrong")]


@dataclass
class VerdictSession:
    task_id: int | None = None  # server-side only (gr.State): never sent to the page


@contextlib.contextmanager
def refused() -> Iterator[None]:
    try:
        yield
    except NotAllowed as error:
        raise gr.Error(f"허용되지 않습니다 · Not allowed: {error}") from None


def _extraction(value: str | None) -> bool | None:
    return EXTRACTION.get(value or "")


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    return views.esc(value if isinstance(value, str) else str(value))


def deciders_html(task: Task) -> str:
    """What the response was read as and who decided what, before people (no answering model named)."""
    score = task.score
    checker_outcome = score.outcome if score.decided_by == "checker" else score.details.get("checker_outcome", "—")
    lines = [f'<li><b>읽은 답 · Answer read</b>: <code class="bs-extracted">{_shown(score.extracted)}</code></li>',
             f"<li><b>검사기 · Checker</b> <code>{views.esc(score.checker or '—')}</code> "
             f"{views.esc(score.checker_version)}: <b>{views.esc(checker_outcome)}</b>"
             + (f" — {views.esc(score.explanation)}" if score.explanation and score.decided_by == "checker" else "")
             + "</li>"]
    if score.decided_by == "judge":
        lines.append(f"<li><b>판정 모델 · Judge</b> <code>{views.esc(score.judge_model)}</code>: "
                     f"<b>{views.esc(score.outcome)}</b> (decided the score)</li>")
    beside = score.details.get("judge")
    if isinstance(beside, dict) and score.decided_by != "judge":
        said = beside.get("verdict")
        text = "no verdict" if said is None else ("correct" if said else "wrong")
        lines.append(f"<li><b>판정 모델 · Judge</b> <code>{views.esc(beside.get('model'))}</code> beside it: "
                     f"<b>{text}</b></li>")
    external = task.external or {}
    if isinstance(external.get("is_correct"), bool):
        lines.append(f"<li><b>원 도구의 판정 · The tool's own verdict</b> ({views.esc(external.get('source'))}): "
                     f"<b>{'correct' if external['is_correct'] else 'wrong'}</b></li>")
    decided = {"checker": "검사기 · the checker", "judge": "판정 모델 · the judge"}.get(score.decided_by, score.decided_by)
    if score.outcome == "undecided":
        decided = "아무도 · no one yet (undecided)"
    lines.append(f"<li><b>결정 · Decided by</b>: {views.esc(decided)}</li>")
    return (f'<div class="bs-deciders"><p class="bs-tier">{views.esc(verdicts.TIER_LABELS.get(task.tier, ""))}</p>'
            f"<ul>{''.join(lines)}</ul></div>")


def _vote_cells(vote: Vote, settings_label: Callable[[str | None], str]) -> str:
    reading = {True: "read right", False: "read wrong", None: "—"}[vote.extraction_ok]
    return (f'<td class="bs-reviewer">{views.esc(vote.user)}</td><td class="bs-verdict">{views.esc(vote.verdict)}</td>'
            f"<td>{reading}</td><td>{views.esc(settings_label(vote.error_category) or '—')}</td>"
            f"<td>{views.esc(vote.reason or '—')}</td><td>{views.esc(vote.outcome or 'pending')}</td>"
            f"<td>{views.esc(vote.at)}</td>")


VOTE_HEAD = ("<tr><th>검토자 · Reviewer</th><th>판정 · Verdict</th><th>추출 · Reading</th><th>오류 유형 · Category</th>"
             "<th>사유 · Reason</th><th>상태 · State</th><th>때 · When</th></tr>")


class VerdictsTab:
    def __init__(self, ctx: Any, question_markdown: Callable[..., str]):
        self.ctx, self.question_markdown = ctx, question_markdown
        self.desk = VerdictDesk(ctx.workspace)
        self.state = gr.State(VerdictSession())
        with gr.Row():
            self.b_prev = gr.Button("◀ 이전 · Previous (P)", size="sm", elem_classes=["bs-prev"], elem_id="verdicts-prev")
            self.b_next = gr.Button("다음 · Next (N) ▶", size="sm", elem_classes=["bs-next"], elem_id="verdicts-next")
            self.b_mine = gr.Button("내 다음 미판정 · Next undecided for me", size="sm", variant="primary",
                                    elem_id="verdicts-mine")
            self.b_skip = gr.Button("건너뛰기 · Skip", size="sm", elem_id="verdicts-skip")
            self.b_disputed = gr.Button("다음 조정 대상 · Next disputed (lead)", size="sm", visible=False,
                                        elem_id="verdicts-disputed")
        self.progress = gr.HTML(elem_id="verdicts-progress")
        self.guidelines = GuidelinesPanel(ctx, QUEUE)
        self.status = gr.HTML(elem_id="verdicts-status")
        with gr.Row():
            with gr.Column(scale=5):
                self.question = gr.Markdown(latex_delimiters=LATEX_DELIMITERS, elem_id="verdicts-question")
                self.images = gr.HTML(elem_id="verdicts-images")
            with gr.Column(scale=6):
                gr.Markdown("**응답 · Response**")
                self.response = gr.HTML(elem_id="verdicts-response")
                self.deciders = gr.HTML(elem_id="verdicts-deciders")
                self.case = gr.HTML(elem_id="verdicts-case")
                self.verdict = gr.Radio([(VERDICT_LABELS[v], v) for v in VERDICTS], label="판정 · Verdict",
                                        elem_id="verdicts-verdict")
                self.extraction = gr.Radio(EXTRACTION_CHOICES, label="읽은 답이 맞나요? · Was the answer read right?",
                                           elem_id="verdicts-extraction")
                # the workspace's taxonomy ([verdicts] error_categories), read when the server starts
                self.category = gr.Dropdown(self._categories(), value="",
                                            label="오류 유형 (오답일 때) · Error category (for incorrect)",
                                            elem_id="verdicts-category")
                self.reason = gr.Textbox(label="사유 · Reason", lines=2, elem_id="verdicts-reason")
                with gr.Row():
                    self.b_save = gr.Button("판정 저장 · Save the verdict (S)", variant="primary",
                                            elem_classes=["bs-save"], elem_id="verdicts-save")
                    self.b_settle = gr.Button("조정 판정 적용 · Settle as lead", variant="stop", visible=False,
                                              elem_id="verdicts-settle")
        with gr.Accordion("기록 · History", open=False, elem_id="verdicts-history-box"):
            self.history = gr.HTML(elem_id="verdicts-history")
        self._wire()

    # -- rendering ----------------------------------------------------------------------
    @property
    def outputs(self) -> list[Any]:
        return [self.state, self.status, self.progress, self.question, self.images, self.response, self.deciders,
                self.case, self.verdict, self.extraction, self.category, self.reason, self.history]

    @property
    def open_outputs(self) -> list[Any]:
        return [*self.outputs, *self.guidelines.outputs, self.b_disputed, self.b_settle]

    def _categories(self) -> list[tuple[str, str]]:
        return [("", ""), *((c.label, c.name) for c in self.desk.settings.error_categories)]

    def render(self, user: Any, task_id: int | None, message: str = "", error: str = "") -> list[Any]:
        engine = self.ctx.workspace.store.engine
        progress = self.ctx.progress.html(QUEUE, user.name)
        note = "".join([f'<div class="bs-message">{views.esc(message)}</div>' if message else "",
                        f'<div class="bs-error" role="alert">{views.esc(error)}</div>' if error else ""])
        if task_id is None:
            total, done, disputed = verdicts.count(engine)
            empty = (f'<div class="bs-note">응답 {total}건 · {total} responses in the queue, {done} settled, '
                     f"{disputed} waiting for the lead</div>")
            return [VerdictSession(), empty + note, progress, "", "", "", "", "", None, None, "", "", ""]
        try:
            task = verdicts.get_task(engine, task_id)
        except NotFoundError:
            return self.render(user, None, message, error or "그 응답은 이제 대기열에 없습니다 · That response left the queue")
        order = verdicts.ordered_ids(engine)
        position = f"{order.index(task_id) + 1} / {len(order)}" if task_id in order else ""
        try:
            stored = self.ctx.workspace.store.get(task.item_id)
            record = stored.item.to_record()
            changed = stored.content_hash not in (None, task.content_hash)
        except NotFoundError:
            record, changed = None, True
        settled = verdicts.result(engine, task_id)
        state = ("settled" if settled else "disputed" if verdicts.is_disputed(engine, task_id) else "open")
        status = (f'<span class="bs-verdict-position" data-state="{state}">{views.esc(position)} · '
                  f"<code>{views.esc(task.item_id)}</code> · {views.esc(state)}</span>")
        if settled is not None:
            status += (f'<div class="bs-settled">판정 · Settled: <b>{views.esc(settled.verdict)}</b> by '
                       f"{views.esc(settled.by)} ({views.esc(settled.how)})</div>")
        if changed:
            status += ('<div class="bs-note">이 문항은 응답 뒤에 바뀌었습니다 · The item changed since this response: '
                       "a verdict applies to the response as it was given</div>")
        holder = claims.claim(engine, user.name, QUEUE, task.key) if state == "open" else None
        if holder is not None:
            status += (f'<div class="bs-note">{views.esc(holder.user)} 님이 수정 중 · {views.esc(holder.user)} is '
                       f"editing it ({views.esc(holder.until)})</div>")
        everyone = verdicts.votes(engine, task_id)
        admin = user.role == ADMIN
        mine = next((v for v in reversed(everyone) if v.user == user.name and v.outcome is None), None)
        images = views.crops_html(record) if record and views.image_slots(record) else ""
        return [VerdictSession(task_id), status + note, progress,
                self.question_markdown(record, with_answer=True) if record else "", images,
                response_html(task.response, "verdicts-response-text"), deciders_html(task),
                self.case_html(everyone) if admin and state == "disputed" else "",
                mine.verdict if mine else None,
                None if mine is None or mine.extraction_ok is None else ("right" if mine.extraction_ok else "wrong"),
                (mine.error_category or "") if mine else "",
                (mine.reason or "") if mine else "",
                self.history_html(task, everyone, settled, user.name, admin)]

    def case_html(self, everyone: list[Vote]) -> str:
        disputed = [vote for vote in everyone if vote.outcome == verdicts.DISPUTED]
        rows = "".join(f"<tr>{_vote_cells(vote, self.desk.settings.label)}</tr>" for vote in disputed)
        return (f'<div class="bs-case"><b>검토자 판정이 다릅니다 · The reviewers differ</b>'
                f'<table class="bs-table bs-side-by-side">{VOTE_HEAD}{rows}</table></div>')

    def history_html(self, task: Task, everyone: list[Vote], settled: Any, user: str, admin: bool) -> str:
        """The score before people, every reviewer's verdict (others' once settled, or for admins), the
        settled verdict and whether it reached the run."""
        shown = [v for v in everyone if admin or settled is not None or v.user == user]
        rows = "".join(f'<tr class="bs-vote">{_vote_cells(vote, self.desk.settings.label)}</tr>' for vote in shown)
        score = task.score
        before = (f"<p>점수 전 · Before people: <b>{views.esc(score.outcome)}</b> by {views.esc(score.decided_by)}"
                  + (f" ({views.esc(score.judge_model)})" if score.judge_model else "") + "</p>")
        after = ""
        if settled is not None:
            category = self.desk.settings.label(settled.error_category)
            after = (f'<p class="bs-settled">판정 · Settled: <b>{views.esc(settled.verdict)}</b>'
                     + (f" · {views.esc(category)}" if category else "")
                     + f" by {views.esc(settled.by)} ({views.esc(settled.how)}), {views.esc(settled.at)}"
                     + (f" — {views.esc(settled.reason)}" if settled.reason else "")
                     + f" · {views.esc(verdicts.APPLIED_LABELS.get(settled.applied or '', settled.applied or '—'))}</p>")
        hidden = len(everyone) - len(shown)
        waiting = f'<p class="bs-note">{hidden} other verdict(s), shown once settled</p>' if hidden else ""
        return (f'<div class="bs-verdict-history">{before}<table class="bs-table">{VOTE_HEAD}{rows}</table>'
                f"{waiting}{after}</div>")

    # -- wiring -------------------------------------------------------------------------
    def _member(self, request: gr.Request) -> Any:
        return self.ctx.member(request, QUEUE)

    def navigate_handler(self, how: VerdictMove) -> Callable[..., list[Any]]:
        def handler(session: VerdictSession, request: gr.Request) -> list[Any]:
            user = self._member(request)
            if how == "disputed":
                with refused():
                    QUEUES[QUEUE].check_decision(user.role, verdicts.ADJUDICATE)
            engine = self.ctx.workspace.store.engine
            found = verdicts.navigate(engine, user.name, session.task_id, how)
            if found is None:
                empty = {"next": "마지막입니다 · This is the last response", "prev": "처음입니다 · This is the first response",
                         "unreviewed": "판정할 응답이 없습니다 · No response left for you to decide",
                         "disputed": "조정할 응답이 없습니다 · No response waits for the lead"}[how]
                return self.render(user, session.task_id, empty)
            return self.render(user, found)
        return handler

    def skip_handler(self, session: VerdictSession, request: gr.Request) -> list[Any]:
        user = self._member(request)
        if session.task_id is not None:
            claims.skip(self.ctx.workspace.store.engine, user.name, QUEUE, verdicts.task_key(session.task_id))
        return self.navigate_handler("unreviewed")(session, request)

    def save_handler(self, lead: bool) -> Callable[..., list[Any]]:
        def handler(session: VerdictSession, verdict: str | None, extraction: str | None, category: str | None,
                    reason: str, request: gr.Request) -> list[Any]:
            user = self._member(request)
            if session.task_id is None:
                return self.render(user, None, error="먼저 응답을 여세요 · Open a response first")
            with refused():
                try:
                    act = self.desk.adjudicate if lead else self.desk.decide
                    done = act(user, session.task_id, verdict or "", _extraction(extraction), category or None,
                               reason or "")
                except (VerdictError, NotFoundError, BenchsmithError) as error:
                    if isinstance(error, NotAllowed):
                        raise
                    return self.render(user, session.task_id, error=f"저장하지 않았습니다 · Not saved: {error}")
            self.ctx.progress.decided(QUEUE)
            return self.render(user, session.task_id, done.message)
        return handler

    def _wire(self) -> None:
        moves: list[tuple[Any, VerdictMove]] = [(self.b_prev, "prev"), (self.b_next, "next"),
                                                (self.b_mine, "unreviewed"), (self.b_disputed, "disputed")]
        for button, how in moves:
            button.click(self.navigate_handler(how), [self.state], self.outputs, api_visibility="private",
                         **fast(self.status))
        self.b_skip.click(self.skip_handler, [self.state], self.outputs, api_visibility="private", **fast(self.status))
        form = [self.state, self.verdict, self.extraction, self.category, self.reason]
        self.b_save.click(self.save_handler(False), form, self.outputs, api_visibility="private", **fast(self.status))
        self.b_settle.click(self.save_handler(True), form, self.outputs, api_visibility="private", **fast(self.status))

    def open(self, user: Any) -> list[Any]:
        """Opening the tab: the next response this user has to decide, the guidelines, and the lead's
        buttons for admins."""
        lead = user.role == ADMIN
        found = verdicts.navigate(self.ctx.workspace.store.engine, user.name, None, "unreviewed")
        return [*self.render(user, found), *self.guidelines.load(user), gr.update(visible=lead), gr.update(visible=lead)]

    def open_on_select(self, tab: Any) -> None:
        def handler(session: VerdictSession, request: gr.Request) -> list[Any]:
            user = self._member(request)  # annotators are refused, whatever the page shows
            return [gr.skip()] * len(self.open_outputs) if session.task_id is not None else self.open(user)

        tab.select(handler, [self.state], self.open_outputs, api_visibility="private", **fast(self.status))


DECIDER_COLUMNS = [("format", "형식 · Format"), ("decider", "결정자 · Decider"), ("n", "n"),
                   ("agreement", "일치 · Agreement"), ("kappa", "Cohen's κ"), ("ci", "95% CI"),
                   ("false_accepts", "잘못 인정 · False accepts"), ("false_rejects", "잘못 거부 · False rejects"),
                   ("extraction", "추출 맞음 · Read right")]
FORMAT_COLUMNS = [("format", "형식 · Format"), ("responses", "응답 · Responses"), ("judged", "판정 모델 결정 · Judged"),
                  ("share", "판정 비율 · Share judged"), ("verdicts", "사람 판정 · People's verdicts")]


def verdict_stats_html(desk: VerdictDesk) -> str:
    """The stats tab's section: each decider's agreement with people's verdicts, per format."""
    from evaluation.verdict_agreement import verdict_agreement

    figures = verdict_agreement(desk.settled_verdicts(), desk.responses_per_format())
    if not figures.verdicts and not figures.formats:
        return ("<h3>응답 판정 일치도 · Deciders vs people's verdicts</h3>"
                '<div class="bs-note">아직 없음 · No verdicts yet (annotate load-verdicts RUN)</div>')

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{100 * value:.1f}%"

    rows = [{"format": r.answer_format, "decider": r.decider, "n": r.n, "agreement": pct(r.agreement),
             "kappa": "—" if r.kappa is None else f"{r.kappa:.3f}",
             "ci": "—" if r.kappa_ci is None else f"[{r.kappa_ci[0]:.3f}, {r.kappa_ci[1]:.3f}]",
             "false_accepts": r.false_accepts, "false_rejects": r.false_rejects,
             "extraction": f"{r.extraction_right}/{r.extraction_checked}" if r.extraction_checked else "—"}
            for r in figures.deciders]
    formats = [{"format": f.answer_format, "responses": f.responses, "judged": f.judged, "share": pct(f.share_judged),
                "verdicts": f.verdicts} for f in figures.formats]
    return (f"<h3>응답 판정 일치도 · Deciders vs people's verdicts</h3><p>{figures.verdicts} responses decided by "
            "people; κ's interval: percentile bootstrap over the responses (2,000 resamples)</p>"
            + f'<div id="stats-verdicts">{views.table_html(rows, DECIDER_COLUMNS)}'
            + views.table_html(formats, FORMAT_COLUMNS) + "</div>")
