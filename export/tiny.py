"""The `tiny` config: the items of a subset written by `benchsmith analyze subset`, with what is
needed to estimate accuracy on the release's items from answers on them.

The release carries `tiny/estimation.json`, the subset record restricted to the release: `items`
are the tiny rows, `all_items` the release items the fit gave parameters to (the estimate's
target set), `discrimination` / `difficulty` their 2PL parameters. It is a `SubsetSpec`, so
`benchsmith analyze estimate --subset tiny/estimation.json` reads it as it is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from filtering.irt.records import SubsetSpec
from filtering.irt.subset import load_subset

ESTIMATION_FILE = "tiny/estimation.json"


@dataclass
class TinyPlan:
    source: Path
    sha256: str  # of the subset file as read
    spec: SubsetSpec  # as written by `analyze subset`
    estimation: SubsetSpec  # restricted to the release
    notes: list[str] = field(default_factory=list)

    @property
    def items(self) -> set[str]:
        return set(self.estimation.items)


def subset_path(text: str, workspace: Workspace) -> Path:
    """The subset file: as given (absolute or from the current folder), else under the workspace."""
    path = Path(text)
    if path.is_file() or path.is_absolute():
        return path
    inside = workspace.root / path
    return inside if inside.is_file() else path


def plan_tiny(text: str, workspace: Workspace, released: dict[str, str]) -> TinyPlan:
    """`released`: the release's item ids → their content hash now."""
    path = subset_path(text, workspace)
    if not path.is_file():
        raise BenchsmithError(f"tiny: subset file {text} not found (looked in the current folder and {workspace.root})")
    data = path.read_bytes()
    spec = load_subset(path)
    notes = []
    missing = [i for i in spec.items if i not in released]
    stale = [i for i in spec.items if i in released and i in spec.content_hashes
             and spec.content_hashes[i] != released[i]]
    unchecked = [i for i in spec.items if i in released and i not in spec.content_hashes]
    if missing:
        notes.append(f"tiny: {len(missing)} of the subset's {len(spec.items)} items are not in this release "
                     f"and are left out ({', '.join(missing[:5])}{' …' if len(missing) > 5 else ''})")
    if stale:
        notes.append(f"tiny: {len(stale)} subset item(s) changed since the subset was made (content hash) and are "
                     f"left out ({', '.join(stale[:5])}{' …' if len(stale) > 5 else ''}); their accuracy is predicted")
    if unchecked:
        notes.append(f"tiny: {len(unchecked)} subset item(s) without a content hash in the subset file: not checked")
    keep = [i for i in spec.all_items if i in released]
    position = {item: j for j, item in enumerate(spec.all_items)}
    chosen = [i for i in spec.items if i in released and i not in stale]
    uncovered = len(set(released) - set(spec.all_items))
    if uncovered:
        notes.append(f"tiny: {uncovered} release item(s) have no parameters in the subset file (not in its fit); "
                     f"the estimate covers the other {len(keep)}")
    estimation = spec.model_copy(update={
        "items": chosen, "all_items": keep,
        "content_hashes": {i: spec.content_hashes[i] for i in chosen if i in spec.content_hashes},
        "discrimination": [spec.discrimination[position[i]] for i in keep],
        "difficulty": [spec.difficulty[position[i]] for i in keep]})
    return TinyPlan(path, hashlib.sha256(data).hexdigest(), spec, estimation, notes)


def write_estimation(plan: TinyPlan, root: Path) -> Path:
    path = root / ESTIMATION_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan.estimation.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return path


def card_text(plan: TinyPlan | None, rows: int) -> str:
    if plan is None:
        return ""
    est = plan.estimation
    position = {item: j for j, item in enumerate(est.all_items)}
    table = "\n".join(f"| `{i}` | {est.discrimination[position[i]]:.4f} | {est.difficulty[position[i]]:.4f} |"
                      for i in est.items) or "| (none) | | |"
    return f"""
## The `tiny` config: estimating accuracy from {rows} items

`tiny` holds {rows} items chosen by `benchsmith analyze subset` ({est.method}), fitted on the answers of
{len(est.training_models)} models (subset file sha256 `{plan.sha256[:16]}…`, made {est.created_at}). A model's
accuracy on the {len(est.all_items)} release items the fit covers is estimated from its answers on
`tiny` alone. With P(correct | θ) = 1 / (1 + exp(−a (θ − b))) and the parameters below, its ability θ
gets a posterior on a grid: the prior is the training models' abilities (in `{ESTIMATION_FILE}`),
smoothed, mixed with a wide N(0, 3²); the likelihood of its tiny answers is weighted by
{est.likelihood_weight} (item parameters carry over imperfectly to new models). Then

accuracy ≈ (tiny items correct + E_θ[Σ over the other covered items of P(correct | θ)]) / {len(est.all_items)}
+ (share of the other items) × s × r̄,

where r̄ is the model's mean residual on tiny (correct minus expected) and s = max(0, 1 − se(r̄)² / r̄²)
shrinks it by its own noise; the result is kept within what the tiny answers allow.

Every covered item's (a, b) is in `{ESTIMATION_FILE}` (listed in `checksums.json`), a subset
record that `benchsmith analyze estimate --subset {ESTIMATION_FILE} --matrix ANSWERS.csv` reads
as it is (a wide 0/1 file: first column the model, one column per tiny item). The parameters come
from the models named there; a model unlike all of them may be estimated less well.

| tiny item | discrimination a | difficulty b |
|---|---:|---:|
{table}
"""
