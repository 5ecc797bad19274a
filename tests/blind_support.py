"""Workspaces for the blind-scoring tests: the sample items, four models' responses on each with
task ids, model names and a run id no page would show by chance, and one item whose rationale
was drafted by one of the scored models (its text is also one of the blind responses); and the
annotator server on a held socket, as `annotate` runs it."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import insert

from annotator.review import auth
from annotator.review.sample import load_sample
from annotator.review.tables import ensure_tables, scoring_tasks
from curation.core.workspace import Workspace, init_workspace

from .annotator_support import running_server

MODELS = ("zeta-model-9", "omega-model-7", "kappa-model-3", "sigma-model-5")
RUN_ID = "run-blind-4471"
ITEMS = ("sample-001", "sample-002", "sample-003", "sample-004", "sample-005")
DRAFTED = "sample-004"  # its rationale is MODELS[0]'s response, drafted by it
PASSWORDS = {"alice": "password-alice", "bob": "password-bob", "erin": "password-erin", "carol": "password-carol",
             "dave": "password-dave"}
ROLES = {"alice": "admin", "bob": "expert", "erin": "expert", "carol": "annotator", "dave": "annotator"}


def task_id(item: str, model: str) -> int:
    """Seven digits, loaded in MODELS order (as task ids follow load order)."""
    return 7_340_100 + 10 * ITEMS.index(item) + MODELS.index(model)


def response_text(item: str, model: str) -> str:
    return f"{item} 풀이 — 응답 본문 {ITEMS.index(item)}.{MODELS.index(model)}: 잠열 방출로 감률이 작아진다."


def build(root: Path) -> Workspace:
    workspace = init_workspace(root)
    load_sample(workspace)
    engine = workspace.store.engine
    ensure_tables(engine)
    with engine.begin() as conn:
        for item in ITEMS:
            for model in MODELS:
                conn.execute(insert(scoring_tasks).values(id=task_id(item, model), item_id=item, model=model,
                                                          rationale=response_text(item, model), run_id=RUN_ID))
    drafted = {"text": response_text(DRAFTED, MODELS[0]), "status": "draft", "author": MODELS[0]}
    workspace.store.update_fields(DRAFTED, {"rationale": drafted}, expect_rev=1, author="curator",
                                  stage="rationale-draft", reason=f"rationale drafted by {MODELS[0]}")
    for name, role in ROLES.items():
        auth.add_user(engine, name, role, PASSWORDS[name])
    return workspace


def secrets_served(workspace: Workspace) -> list[str]:
    """What must never reach an expert: the model names, the run id, the task ids."""
    return [*MODELS, RUN_ID, *(str(task_id(item, model)) for item in ITEMS for model in MODELS)]


serving = running_server  # the server the `annotate` command runs, on a held loopback port
