"""Where the answers come from: the workspace (its solve matrix, rebuilt from the run logs, and
the store's keys — an open item's whole key, to compare its answers —, option counts and dedup
conflicts) or a wide 0/1 matrix file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from curation.core.item import KeyFactsView
from curation.core.store import view_from_data
from curation.core.workspace import Workspace
from filtering.irt.responses import ItemFacts, Responses, from_solve_matrix, read_matrix_file

CONFLICT_PREFIX = "answer conflict"  # how the dedup stage words an answer conflict in review_reasons


def from_workspace(ws: Workspace, unparseable_as_wrong: bool = False, run_ids: list[str] | None = None) -> Responses:
    """Answers of the runs (all, or `run_ids`) on the store's items as they are (implicit variant);
    stale cells skipped."""
    from filtering.adversarial import matrix_from_workspace

    matrix = matrix_from_workspace(ws, run_ids)
    implicit = [label for label, description in matrix.models.items()
                if description.get("variant", "implicit") == "implicit"]
    if len(implicit) < len(matrix.models):
        matrix.table = matrix.table.filter(pc.is_in(matrix.table["model"], value_set=pa.array(implicit, pa.string())))
        matrix.models = {label: matrix.models[label] for label in implicit}
    facts = {}
    # streamed (no pool of items held) and read as views: validating 43,637 whole items took 2.5 s
    for item_id, data, content_hash in ws.store.iter_data(pc.unique(matrix.table["item_id"]).to_pylist()):
        item = view_from_data(data, KeyFactsView)
        keys = item.answer_list()
        open_key = item.answer.as_dict() if item.answer is not None and item.answer_format != "choice" else None
        facts[item_id] = ItemFacts(content_hash, keys[0] if len(keys) == 1 else None, len(item.options),
                                   [r for r in item.flags.review_reasons if r.startswith(CONFLICT_PREFIX)], open_key)
    return from_solve_matrix(matrix, facts, unparseable_as_wrong)


def load_responses(ws: Workspace | None, matrix_file: Path | None, unparseable_as_wrong: bool = False,
                   run_ids: list[str] | None = None) -> Responses:
    if matrix_file is not None:
        return read_matrix_file(matrix_file)
    assert ws is not None
    return from_workspace(ws, unparseable_as_wrong, run_ids)
