"""The demo's rationale stage, so the rationale-review and expert-scoring queues have work.

A draft rationale per item comes from the packaged local model when its extra is installed
(a few items, one try each: a 270M model rarely reaches the gold answer) and otherwise from
the offline drafter: a deterministic template that names the gold option and says plainly
that it is not a model. The drafts become item revisions (stage `rationale-draft`) and, as
model rationales, blind scoring tasks for the experts.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation.core.errors import BenchsmithError
from curation.core.item import Item
from curation.core.revise import active_items, revise
from curation.core.workspace import Workspace
from curation.llm import SolvedItem, TextModel, TextRequest, TextResult
from curation.steps.model_steps import draft_rationales

OFFLINE_DRAFTER = "offline-drafter"
OFFLINE_LABEL = "[오프라인 초안 · offline drafter: a template, not a model]"
LOCAL_RATIONALE_MODEL = "llamacpp:gemma3-270m?max_tokens=256"
LOCAL_LIMIT = 3
RUN_ID = "demo-rationales"
MARKERS = "①②③④⑤⑥⑦⑧⑨⑩"


@dataclass
class OfflineDrafter:
    """A stand-in for a model, honest about it: states the gold option and leaves the reasoning to
    the reviewer. Same item, same text."""

    name: str = OFFLINE_DRAFTER

    def generate(self, requests: list[TextRequest], purpose: str) -> dict[str, TextResult]:
        return {r.key: TextResult(r.key, None, f"{self.name} writes rationale drafts only") for r in requests}

    def solve_with_rationale(self, items: list[Item], attempt: int) -> dict[str, SolvedItem]:
        return {item.id: SolvedItem(item.id, item.gold(), offline_rationale(item), "correct") for item in items}


def offline_rationale(item: Item) -> str:
    chosen = item.answer_list()
    options = "; ".join(f"{MARKERS[n - 1] if n <= len(MARKERS) else n} {item.options[n - 1].text}".strip()
                        for n in chosen if 0 < n <= len(item.options))
    return (f"{OFFLINE_LABEL} 정답은 {options} 이다. 다른 보기가 틀린 이유와 근거는 검토자가 채워야 한다 · "
            "The reviewer must add why this option is right and the others are not.")


def _local_client(workspace: Workspace) -> TextModel | None:
    from benchsmith.demo_evaluate import local_model_available

    if not local_model_available():
        return None
    from evaluation.generation import client_factory

    try:
        return client_factory(LOCAL_RATIONALE_MODEL, workspace)
    except BenchsmithError:
        return None


def draft_sample_rationales(workspace: Workspace) -> str:
    from annotator.review.scoring import RationaleTask, load_rationales
    from annotator.review.tables import ensure_tables

    pending = [s for s in active_items(workspace.store) if s.item.rationale is None and s.item.answer_list()]
    changed: dict[str, Item] = {}
    local = _local_client(workspace)
    if local is not None and pending:
        changed.update(draft_rationales([s.item for s in pending[:LOCAL_LIMIT]], local, max_tries=1).changed)
    offline = draft_rationales([s.item for s in pending if s.item.id not in changed], OfflineDrafter(), max_tries=1)
    changed.update(offline.changed)
    report = revise(workspace.store, pending, lambda item: (changed[item.id], "draft rationale")
                    if item.id in changed else None, stage="rationale-draft", author="demo")
    drafted = [s.item for s in active_items(workspace.store) if s.item.rationale is not None]
    tasks = [RationaleTask(item.id, item.rationale.author or OFFLINE_DRAFTER, item.rationale.text, RUN_ID)
             for item in drafted if item.rationale]
    ensure_tables(workspace.store.engine)
    loaded = load_rationales(workspace.store.engine, tasks, set(workspace.store.ids()))
    by_local = sum(1 for item in changed.values() if item.rationale and item.rationale.author != OFFLINE_DRAFTER)
    source = (f"{by_local} by the packaged local model, the rest by the offline drafter" if local is not None else
              "by the offline drafter, a template that says it is not a model (packaged local model: "
              "pip install 'benchsmith[llamacpp]')")
    return (f"{len(report.changed)} draft rationales {source}; {loaded.added} new scoring tasks "
            f"({loaded.added + loaded.unchanged} in all)")
