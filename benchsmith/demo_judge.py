"""The demo's judge stage, so the expert-scoring queue holds model rationales with judge scores beside them.

A reasoning run answers the sample through the real runner (`benchsmith run --prompt reasoning`):
`baseline:overlap`, a word-overlap rule that writes its reasons and says it is not a model, over
every item; with the `llamacpp` extra also the packaged model over a few items. `benchsmith judge`
then scores each run's rationales: the packaged model judges its own run's few rationales when it
is installed, and every other rationale is judged by `baseline:rubric-checks`, checks anyone can
redo by hand that say in every verdict they are not a model. Rationales and verdicts are loaded as
`annotate load-rationales RUN` and `annotate load-judge RUN` load them.
"""

from __future__ import annotations

from curation.core.workspace import Workspace
from evaluation.judge import current_verdicts, judge_run
from evaluation.metrics import load_run
from evaluation.models import ModelSpec, resolve_model
from evaluation.runner import RunRequest, run_model, store_dataset
from evaluation.sender import SenderSettings

OFFLINE_REASONER = "baseline:overlap"
OFFLINE_JUDGE = "baseline:rubric-checks"
LOCAL_REASONER = "llamacpp:gemma3-270m?max_tokens=256"
LOCAL_LIMIT = 3


def reasoning_plans(workspace: Workspace) -> list[tuple[RunRequest, ModelSpec]]:
    """(reasoning run, its judge) pairs: the offline rule always, the packaged model when installed."""
    from benchsmith.demo_evaluate import local_model_available

    plans = [(RunRequest(resolve_model(OFFLINE_REASONER), prompt_name="reasoning"), resolve_model(OFFLINE_JUDGE))]
    if local_model_available():
        local = resolve_model(LOCAL_REASONER)
        plans.append((RunRequest(local, prompt_name="reasoning", dataset=store_dataset(workspace, limit=LOCAL_LIMIT),
                                 settings=SenderSettings(concurrency=1, timeout_s=300)), local))
    return plans


def judge_sample(workspace: Workspace) -> str:
    from annotator.review.scoring import load_judge, load_rationales, rationale_tasks
    from annotator.review.tables import ensure_tables

    engine = workspace.store.engine
    ensure_tables(engine)
    known = set(workspace.store.ids())
    lines = []
    for request, judge in reasoning_plans(workspace):
        summary = run_model(workspace, request)
        judged = judge_run(workspace, summary.run_dir, judge, request.settings)
        tasks = rationale_tasks(load_run(summary.run_dir, workspace))
        added = load_rationales(engine, tasks, known).added
        verdicts, _ = current_verdicts(workspace, summary.run_id)
        scores = load_judge(engine, verdicts)
        lines.append(f"{summary.run_id}: {len(tasks)} rationales ({added} new scoring tasks), judged by {judge.name}: "
                     f"{judged['ok']} valid, {judged['missing']} missing; {scores.added + scores.unchanged} judge scores "
                     "loaded")
    return "; ".join(lines)
