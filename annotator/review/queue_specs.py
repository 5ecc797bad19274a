"""The review queues as data: one spec per queue says what it selects, which fields a reviewer of
each role may edit, its decisions and what each decision changes. The single-item view
(actions.py), bulk actions (bulk.py) and the server's permission checks (app.py, server.py) all
read these specs; nothing else restates them.

A decision's changes are field paths with either a constant or a `Fill`, a value known only when
the decision is made (who made it, the reason given, the rationale's edit distance); decisions.py
fills them in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from annotator.review.auth import ROLES
from curation.core.errors import BenchsmithError

ANNOTATOR, EXPERT, ADMIN = ROLES
EVERYONE = (ANNOTATOR, EXPERT, ADMIN)
EXPERTS = (EXPERT, ADMIN)


class NotAllowed(BenchsmithError):
    """A role asked for something its queue's spec does not give it (a queue, a field, a decision)."""


class Fill(Enum):
    """A decision's value filled in when it is made."""

    REVIEWER = "the deciding user's name"
    APPEND_REASON = "the field's list with the decision's reason added (unchanged without a reason)"
    EDIT_DISTANCE = "Levenshtein distance from the drafted rationale to the saved text"


@dataclass(frozen=True)
class Decision:
    name: str
    label: str
    roles: tuple[str, ...]
    changes: Mapping[str, Any]  # field path → constant or Fill
    needs_reason: bool = False
    bulk: bool = False  # offered as a bulk action over a filter (to the queue's bulk_roles)
    # the rationale's text against its draft: "unchanged" (adopted as drafted) or "edited"
    draft: Literal["unchanged", "edited"] | None = None
    # its key on the page (shortcuts.py): "A" the queue's main decision (the primary button), "R" the
    # destructive one (a red button); None: a plain button
    shortcut: Literal["A", "R"] | None = None


ButtonVariant = Literal["primary", "secondary", "stop"]


def button_style(decision: Decision) -> tuple[ButtonVariant, list[str]]:
    """A decision's button: its variant and the CSS class its shortcut clicks (shortcuts.py)."""
    if decision.shortcut == "A":
        return "primary", ["bs-accept"]
    if decision.shortcut == "R":
        return "stop", ["bs-reject"]
    return "secondary", []


@dataclass(frozen=True)
class Editable:
    pattern: str  # a field path, as a regular expression matched in full
    roles: tuple[str, ...]


@dataclass(frozen=True)
class Field:
    """A field the queue's screen shows as an input, in order: a text box (`lines` high) or, for
    `kind="key"`, the answer-key editor (the key with its 배점). Who may change it is `editable`'s."""

    path: str
    label: str
    lines: int = 1
    kind: Literal["text", "key"] = "text"


@dataclass(frozen=True)
class Selection:
    """Where a queue's items come from and, for the items table, the facets of which an item needs
    at least one (every item when none); the facets are queues.FACETS' typed predicates."""

    source: Literal["items", "scoring_tasks", "suspects_result", "disputed_decisions", "verdict_tasks"] = "items"
    any_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueueSpec:
    name: str
    title: str
    roles: tuple[str, ...]  # who may open the queue at all
    selects: Selection
    editable: tuple[Editable, ...] = ()
    decisions: tuple[Decision, ...] = ()
    bulk_roles: tuple[str, ...] = ()  # who gets the bulk panel: its bulk decisions and assignment
    # an item assigned to 2+ reviewers keeps each one's decision apart until all have decided
    # (adjudication.py); agreeing decisions apply, others go to the adjudicate queue
    overlap_adjudicated: bool = False
    # the screen: the page its tab is on (annotator/screens/pages.py), its input fields, and the label of
    # the reason box sent with its decisions (None: no reason box)
    page: Literal["review", "expert"] = "expert"
    fields: tuple[Field, ...] = ()
    reason_label: str | None = None

    @property
    def decision_names(self) -> tuple[str, ...]:
        return tuple(decision.name for decision in self.decisions)

    def decision(self, name: str) -> Decision:
        for decision in self.decisions:
            if decision.name == name:
                return decision
        raise NotAllowed(f"decision {name!r} does not belong to the {self.name} queue "
                         f"(choose one of {', '.join(self.decision_names)})")

    def check_role(self, role: str) -> None:
        if role not in self.roles:
            raise NotAllowed(f"the {role} role may not use the {self.name} queue")

    def _rules(self, path: str) -> list[Editable]:
        rules = [rule for rule in self.editable if re.fullmatch(rule.pattern, path)]
        if not rules:
            raise NotAllowed(f"field {path!r} is not editable in the {self.name!r} queue")
        return rules

    def check_field(self, path: str) -> None:
        """The field is editable in this queue by some role."""
        self._rules(path)

    def check_edit(self, role: str, path: str) -> None:
        self.check_role(role)
        if not any(role in rule.roles for rule in self._rules(path)):
            raise NotAllowed(f"field {path!r} is not editable by the {role} role in the {self.name!r} queue")

    def check_decision(self, role: str, name: str) -> Decision:
        self.check_role(role)
        decision = self.decision(name)
        if role not in decision.roles:
            raise NotAllowed(f"the {role} role may not decide {name!r} in the {self.name} queue")
        return decision

    def check_bulk(self, role: str, name: str) -> Decision:
        decision = self.decision(name)
        if not decision.bulk:
            raise NotAllowed(f"{name!r} is not a bulk action of the {self.name} queue")
        if role not in self.bulk_roles:
            raise NotAllowed(f"the {role} role may not run bulk actions in the {self.name} queue")
        return decision

    def may_edit(self, role: str, path: str) -> bool:
        """Whether the role may change the field here (what the page shows editable or read-only)."""
        return role in self.roles and any(role in rule.roles for rule in self.editable if re.fullmatch(rule.pattern, path))

    def edits_for(self, role: str) -> tuple[str, ...]:
        return tuple(rule.pattern for rule in self.editable if role in rule.roles)

    def decisions_for(self, role: str) -> tuple[str, ...]:
        return tuple(decision.name for decision in self.decisions if role in decision.roles)


_REVIEW_REASONS = "flags.review_reasons"
# the rationale decisions: adopting keeps the drafted text, a fix edits it
DRAFT_RULES: tuple[tuple[str, str, Literal["unchanged", "edited"]], ...] = (
    ("adopted", "그대로 채택 · Adopt", "unchanged"), ("minor_fix", "소폭 수정 · Minor fix", "edited"),
    ("major_fix", "대폭 수정 · Major fix", "edited"))

MAX_OPTIONS = 6  # the option fields the item screen has (those an item lacks are hidden)

QUEUES: dict[str, QueueSpec] = {queue.name: queue for queue in (
    QueueSpec(
        "item", "문항 검토 · Item review", EVERYONE, Selection(),
        editable=(Editable(r"stem", EVERYONE), Editable(r"options\.\d+\.text", EVERYONE),
                  Editable(r"source\.bbox", EVERYONE), Editable(r"images\.\d+", EVERYONE),
                  Editable(r"options\.\d+\.image", EVERYONE),
                  # the key and its 배점 decide every model's score: an expert's call, as in the Suspects queue
                  Editable(r"answer", EXPERTS), Editable(r"points", EXPERTS)),
        decisions=(
            Decision("accept", "승인 · Accept", EVERYONE, {"status": "accepted"}, bulk=True, shortcut="A"),
            Decision("needs_fix", "수정 필요 · Needs fix", EVERYONE,
                     {"status": "in_review", _REVIEW_REASONS: Fill.APPEND_REASON}, needs_reason=True),
            Decision("reject", "반려 · Reject", EXPERTS,
                     {"status": "rejected", _REVIEW_REASONS: Fill.APPEND_REASON}, needs_reason=True, shortcut="R"),
        ),
        bulk_roles=(ADMIN,), overlap_adjudicated=True, page="review",
        fields=(Field("stem", "문제 · Stem", lines=3),
                *(Field(f"options.{n}.text", f"보기 {n} · Option {n}") for n in range(1, MAX_OPTIONS + 1)),
                Field("answer", "정답 · Key", kind="key")),
        reason_label="사유 (수정 필요·반려 시 필수) · Reason (needed for needs-fix and reject)"),
    QueueSpec(
        "korea", "한국 특화 검토 · Korea-specific", EVERYONE,
        Selection(any_of=("korea_candidate", "korea_yes", "korea_no")),
        editable=(Editable(r"explicit_variant", EVERYONE),),
        decisions=(
            Decision("confirm", "한국 특화 맞음 · Korea-specific: yes", EVERYONE, {"flags.korea_specific": True},
                     bulk=True, shortcut="A"),
            Decision("deny", "한국 특화 아님 · Korea-specific: no", EVERYONE, {"flags.korea_specific": False},
                     bulk=True, shortcut="R"),
        ),
        bulk_roles=(ADMIN,), overlap_adjudicated=True, page="review",
        fields=(Field("explicit_variant", "명시적 변형 문제 · Explicit variant of the stem", lines=4),),
        reason_label="판정 사유 (선택) · Reason for the decision (optional)"),
    QueueSpec(
        "rationale", "풀이 검토 · Rationale review", EXPERTS, Selection(any_of=("has_rationale",)),
        editable=(Editable(r"rationale\.(text|notes)", EXPERTS),),
        decisions=tuple(
            Decision(name, label, EXPERTS, {"rationale.status": name, "rationale.edit_distance": Fill.EDIT_DISTANCE,
                                            "rationale.author": Fill.REVIEWER}, draft=draft,
                     shortcut="A" if draft == "unchanged" else None)
            for name, label, draft in DRAFT_RULES),
        bulk_roles=(ADMIN,), page="review",
        fields=(Field("rationale.text", "풀이 · Rationale", lines=6), Field("rationale.notes", "메모 · Notes", lines=2))),
    # expert scores go to their own tables (score_desk.py), not to item fields
    QueueSpec("score", "전문가 채점 · Expert scoring", EXPERTS, Selection("scoring_tasks"),
              decisions=(Decision("scored", "점수 저장 · Save scores", EXPERTS, {}),)),
    # people's verdicts on model responses (verdicts.py): the verdict becomes the run's score; an overlapped
    # response's verdicts are kept apart until all are in, a difference settled by the lead (an admin)
    QueueSpec("verdicts", "응답 판정 · Verdicts", EXPERTS, Selection("verdict_tasks"),
              decisions=(Decision("correct", "정답 · Correct", EXPERTS, {}),
                         Decision("incorrect", "오답 · Incorrect", EXPERTS, {}),
                         Decision("no_answer", "답 없음 · No answer", EXPERTS, {}),
                         Decision("adjudicate", "조정 판정 적용 · Settle as lead", (ADMIN,), {})),
              overlap_adjudicated=True),
    # membership from `analyze suspects`; the decisions' writes (a new key, a status) are suspects.py's
    QueueSpec("suspects", "의심 문항 · Suspects", EXPERTS, Selection("suspects_result"),
              # "keep" changes nothing and is the usual outcome: the primary button, not the destructive ones
              decisions=(Decision("keep", "유지 · Keep (the key is right)", EXPERTS, {}, shortcut="A"),
                         Decision("fix_key", "정답 수정 · Fix key", EXPERTS, {}),
                         Decision("ambiguous", "모호함 · Mark ambiguous", EXPERTS, {}),
                         Decision("reject", "반려 · Reject", EXPERTS, {}, shortcut="R"))),
    # the overlapped items whose reviewers disagreed: the lead applies one of the queue's decisions
    # (theirs to pick or merge) through adjudication.py. Admins only: an expert may be one of the
    # reviewers whose disagreement it settles.
    QueueSpec("adjudicate", "조정 · Adjudicate", (ADMIN,), Selection("disputed_decisions"),
              decisions=(Decision("adjudicate", "판정 적용 · Apply the decision", (ADMIN,), {}),)),
)}

ITEM_QUEUES = tuple(name for name, queue in QUEUES.items() if queue.selects.source == "items")


def spec(queue: str) -> QueueSpec:
    if queue not in QUEUES:
        raise NotAllowed(f"queue {queue!r}: choose one of {', '.join(QUEUES)}")
    return QUEUES[queue]
