"""The exam score: the raw points (배점) a model earned on each paper, out of the paper's total,
beside accuracy, as Korean CSAT leaderboards report it.

A paper is the items of one exam and session (`source.exam`, `source.session`) that a run was
meant to answer (its dataset's selection: the items asked and the items not sent), on a paper
where items carry points. Its total is the sum of those items' points: an item not sent (an
image item for a text-only model) or not yet answered earns nothing, as a blank answer sheet
would, and is said so (`unanswered`). An item earns its points when its current record is
`correct` (no partial credit: a multi-part key earns them only when every part is right, as the
papers mark them); `undecided` points wait for a judge or a person and are shown apart. Items
of such a paper without points are counted (`unpointed`), never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from evaluation.metrics import RunData
from evaluation.runlog import read_answer_manifest


@dataclass
class PaperScore:
    exam: str
    session: str | None
    items: int  # items with points in the run's selection
    total: float  # their points
    earned: float  # points of the items answered correctly
    correct: int
    answered: int  # items with points and a decided current record
    undecided: float = 0.0  # points waiting for a judge or a person
    unanswered: float = 0.0  # points of items not sent or not yet answered
    unpointed: int = 0  # items of the paper in the selection without points: left out of the total

    @property
    def paper(self) -> str:
        return self.exam if self.session is None else f"{self.exam} · {self.session}"

    @property
    def accuracy(self) -> float | None:
        """Correct over the paper's items answered and decided (the report's rule)."""
        return self.correct / self.answered if self.answered else None


def _points(value: float) -> str:
    return f"{value:g}"


def paper_cell(score: PaperScore | None) -> str:
    """`87 / 100` (+ what is pending) for a Markdown table."""
    if score is None:
        return "—"
    text = f"{_points(score.earned)} / {_points(score.total)}"
    extra = [f"{_points(score.undecided)} undecided"] if score.undecided else []
    extra += [f"{_points(score.unanswered)} unanswered"] if score.unanswered else []
    return text + (f" ({', '.join(extra)})" if extra else "")


def exam_scores(run: RunData) -> list[PaperScore]:
    """The run's score on each paper with points, in paper order; [] where no item has points."""
    if not run.facets.any_points():
        return []
    scope = [*read_answer_manifest(run.run_dir).item_ids, *run.skipped]
    facts = run.facets.exam_facts(scope)
    if not facts:
        return []
    outcome_of = run.outcome_of
    papers: dict[tuple[str, str | None], PaperScore] = {}
    for item_id, (exam, session, points) in facts.items():
        score = papers.setdefault((exam, session), PaperScore(exam, session, 0, 0.0, 0.0, 0, 0))
        if points is None:
            score.unpointed += 1
            continue
        score.items += 1
        score.total += points
        outcome = outcome_of.get(item_id)
        if outcome is None:
            score.unanswered += points
        elif outcome == "undecided":
            score.undecided += points
        else:
            score.answered += 1
            if outcome == "correct":
                score.correct += 1
                score.earned += points
    return [papers[key] for key in sorted(papers, key=lambda k: (k[0], k[1] or "")) if papers[key].items]


def exam_score_table(runs: list[RunData]) -> dict[str, dict[str, PaperScore]]:
    """paper → run id → its score, for every paper some run has points on."""
    table: dict[str, dict[str, PaperScore]] = defaultdict(dict)
    for run in runs:
        for score in exam_scores(run):
            table[score.paper][run.run_id] = score
    return dict(sorted(table.items()))
