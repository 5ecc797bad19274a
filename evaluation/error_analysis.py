"""Why models are wrong, from people's verdicts: each model's responses people judged incorrect,
broken down by the error category the reviewer tagged (the workspace's taxonomy, KMMMU's error
analysis by default) and by subject, each share with its n and a Wilson 95% interval.

Only verdicts that hold for a run's current records count (the item's content and the response
are the ones the person judged); an incorrect verdict with no category counts as `untagged`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from evaluation.human_verdicts import VerdictSettings, read_verdicts, records_of
from evaluation.metrics import RunData
from evaluation.records import HumanVerdict, response_sha
from evaluation.text_tables import TextTable

UNTAGGED = "untagged"
ALL_SUBJECTS = "all"
Z95 = 1.959963984540054


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion k/n (None for n = 0)."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def current_verdicts(run: RunData) -> dict[str, HumanVerdict]:
    """Item → the person's verdict that holds for the run's current record of it."""
    book = read_verdicts(run.run_dir)
    if not book:
        return {}
    candidates = {item_id for item_id, _, content in book if content is not None and run.hashes.get(item_id) == content}
    records = records_of(run.run_dir, candidates)
    found = {}
    for item_id, record in records.items():
        verdict = book.get((item_id, response_sha(record.text), record.content_hash))
        if verdict is not None and record.content_hash == run.hashes.get(item_id):
            found[item_id] = verdict
    return found


@dataclass(frozen=True)
class CategoryShare:
    run_id: str
    model: str
    subject: str  # "all", or one subject
    category: str  # a taxonomy name, or "untagged"
    k: int
    n: int  # the model's responses people judged incorrect (in the subject)

    @property
    def share(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.k, self.n)


@dataclass
class ErrorBreakdown:
    categories: list[str]  # in taxonomy order, then any other tag met, then untagged
    labels: dict[str, str]
    rows: list[CategoryShare] = field(default_factory=list)
    reviewed: dict[str, int] = field(default_factory=dict)  # run → responses people decided (current)

    @property
    def empty(self) -> bool:
        return not any(row.n for row in self.rows)

    def of(self, run_id: str, subject: str = ALL_SUBJECTS) -> list[CategoryShare]:
        return [row for row in self.rows if row.run_id == run_id and row.subject == subject]


def error_breakdown(runs: list[RunData], settings: VerdictSettings) -> ErrorBreakdown:
    taxonomy = list(settings.category_names)
    per_run: list[tuple[RunData, dict[str, HumanVerdict]]] = [(run, current_verdicts(run)) for run in runs]
    seen = {v.error_category for _, found in per_run for v in found.values()
            if v.verdict == "incorrect" and v.error_category}
    categories = taxonomy + sorted(seen - set(taxonomy)) + [UNTAGGED]
    labels = {c.name: c.label for c in settings.error_categories} | {UNTAGGED: "미분류 · untagged"}
    result = ErrorBreakdown(categories, labels)
    for run, found in per_run:
        result.reviewed[run.run_id] = len(found)
        wrong = {item_id: v for item_id, v in found.items() if v.verdict == "incorrect"}
        values = run.facets.values.get("subject")
        by_subject: dict[str, Counter[str]] = {ALL_SUBJECTS: Counter()}
        for item_id, verdict in wrong.items():
            tag = verdict.error_category or UNTAGGED
            by_subject[ALL_SUBJECTS][tag] += 1
            index = run.facets.position.get(item_id)
            subject = values[index] if values is not None and index is not None else None
            by_subject.setdefault(str(subject) if subject else "—", Counter())[tag] += 1
        for subject in [ALL_SUBJECTS, *sorted(s for s in by_subject if s != ALL_SUBJECTS)]:
            counts = by_subject[subject]
            n = sum(counts.values())
            result.rows += [CategoryShare(run.run_id, run.model_name, subject, category, counts[category], n)
                            for category in categories]
    return result


def _cell(row: CategoryShare) -> str:
    if not row.n:
        return "—"
    low, high = row.ci or (0.0, 0.0)
    return f"{100 * (row.share or 0):.1f} [{100 * low:.1f}, {100 * high:.1f}] ({row.k})"


def category_table(breakdown: ErrorBreakdown, runs: list[RunData]) -> TextTable:
    """One row per model: its incorrect responses (n) and the share in each category."""
    header = ["model", "n incorrect", *(breakdown.labels.get(c, c) for c in breakdown.categories)]
    rows = []
    for run in runs:
        shares = breakdown.of(run.run_id)
        n = shares[0].n if shares else 0
        rows.append([run.label, str(n), *(_cell(row) for row in shares)])
    caption = ("Errors by category, from people's verdicts: share (%) of each model's responses judged incorrect, "
               "Wilson 95% interval, (count); n = responses people judged incorrect.")
    return TextTable(header, rows, caption)


def subject_table(breakdown: ErrorBreakdown, runs: list[RunData]) -> TextTable:
    """One row per model and subject."""
    header = ["model", "subject", "n incorrect", *(breakdown.labels.get(c, c) for c in breakdown.categories)]
    rows = []
    for run in runs:
        subjects = sorted({row.subject for row in breakdown.rows if row.run_id == run.run_id} - {ALL_SUBJECTS})
        for subject in subjects:
            shares = breakdown.of(run.run_id, subject)
            rows.append([run.label, subject, str(shares[0].n if shares else 0), *(_cell(row) for row in shares)])
    caption = ("Errors by category and subject, from people's verdicts: share (%) of the model's incorrect "
               "responses in the subject, Wilson 95% interval, (count).")
    return TextTable(header, rows, caption)


def csv_rows(breakdown: ErrorBreakdown) -> list[list[object]]:
    out: list[list[object]] = []
    for row in breakdown.rows:
        low, high = row.ci or (None, None)
        out.append([row.run_id, row.model, row.subject, row.category, row.k, row.n,
                    "" if row.share is None else round(row.share, 4), "" if low is None else round(low, 4),
                    "" if high is None else round(high, 4)])
    return out


CSV_HEADER = ["run_id", "model", "subject", "category", "count", "n_incorrect", "share", "ci_low", "ci_high"]


def markdown_section(breakdown: ErrorBreakdown, runs: list[RunData]) -> str:
    if breakdown.empty:
        return ""
    reviewed = ", ".join(f"{run.model_name} {breakdown.reviewed.get(run.run_id, 0)}" for run in runs)
    return ("\n## Errors by category (people's verdicts)\n\n" + category_table(breakdown, runs).caption + "\n\n"
            + category_table(breakdown, runs).markdown() + "\n" + subject_table(breakdown, runs).markdown()
            + f"\nResponses people decided: {reviewed}.\n")
