"""The item bank a release carries (`adaptive/bank.json`), so that `benchsmith evaluate --release
PATH:CONFIG --adaptive K -m SPEC` works anywhere, with no workspace: calibrated at build time from
the workspace's answers on the released items (current records only, as `analyze calibrate`),
with the calibrating models, the date, and the error and 90% interval coverage of an adaptive run
measured by leaving each model family out. The card says what it holds and how well it does.

Each bank item's content hash is the released item's store hash, which is the one the runner
computes on the release's own row (a row holds the item's content unchanged), so an adaptive
evaluation of the release checks its items against the bank as a workspace run does."""

from __future__ import annotations

from pathlib import Path

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from evaluation.datasets import ReleaseDataset
from filtering.irt.bank import VALIDATION_K, ItemBank, calibrate, store_facets, write_bank
from filtering.irt.sources import from_workspace

BANK_FILE = "adaptive/bank.json"
CARD_ANCHOR = "\n## Citation"


def add_release_bank(workspace: Workspace, root: Path, released: dict[str, str], notes: list[str]
                     ) -> ItemBank | None:
    """Write the bank under `root` (a release being built, `full` config written) and its section
    into `root/README.md`; None where the workspace has no answers on the released items (and a
    note where it has some but they cannot calibrate a bank)."""
    if not released or not workspace.runs_dir.is_dir() or not any(workspace.runs_dir.iterdir()):
        return None  # a workspace without runs: no bank, and nothing to say
    try:
        responses = from_workspace(workspace)
    except BenchsmithError as error:
        notes.append(f"adaptive: no item bank ({error})")
        return None
    wanted = set(released)
    keep = [j for j, item in enumerate(responses.items) if item in wanted]
    if not keep:
        return None
    import numpy as np

    responses = responses.take(items=np.array(keep))
    try:
        bank = calibrate(responses, store_facets(workspace, responses.items), min(VALIDATION_K, len(keep) // 2))
    except BenchsmithError as error:
        notes.append(f"adaptive: no item bank ({error})")
        return None
    for item in bank.items:
        item.content_hash = released.get(item.id)
    bank.source = f"workspace runs on the release's items ({len(bank.models)} models)"
    bank.created_at = _answers_as_of(workspace)  # a rebuild of the same workspace is byte for byte the same
    write_bank(bank, root / BANK_FILE)
    card = root / "README.md"
    text = card.read_text(encoding="utf-8")
    section = card_text(bank)
    at = text.find(CARD_ANCHOR)
    card.write_text(text[:at] + section + text[at:] if at >= 0 else text + section, encoding="utf-8")
    return bank


def _answers_as_of(workspace: Workspace) -> str:
    """When the newest run log was last written: the date of the answers the bank is calibrated on."""
    from datetime import UTC, datetime

    newest = max((log.stat().st_mtime for log in workspace.runs_dir.glob("*/responses.jsonl")), default=0.0)
    return datetime.fromtimestamp(newest, UTC).isoformat(timespec="seconds")


def card_text(bank: ItemBank) -> str:
    validation = bank.validation
    if validation is None:
        measured = ("Its error was not measured: that needs the answers of models of at least three families "
                    "(checkpoints and seeds of one configuration are one family).")
    else:
        sample = (f", drawn from and scored on a sample of {validation.items} of the bank's items"
                  if validation.items else "")
        measured = (f"Measured by cross-validation over model families (each of the {validation.families} families "
                    f"left out in turn, the bank fitted on the others, each of its models tested with {validation.k} "
                    f"adaptive items answered as it answered them{sample}): mean absolute error of the estimated accuracy "
                    f"**{validation.mae:.3f}**, {validation.ratio:.2f}× that of {validation.k} items drawn at random "
                    f"({validation.random_mae:.3f}); the 90% interval held the model's true accuracy for "
                    f"**{validation.coverage:.0%}** of {validation.models} models. The same cross-validation chose "
                    f"how much the answers weigh against the calibrating models' abilities and how wide the "
                    f"interval is, so these figures lean a little optimistic.")
    families = sorted({m.family for m in bank.models})
    return f"""
## Adaptive evaluation (`adaptive/bank.json`)

`benchsmith evaluate --release PATH:CONFIG --adaptive 100 -m SPEC` asks a model at most 100 of the
{len(bank.items)} items with 2PL parameters in `{BANK_FILE}`, each drawn by its information at the
model's current ability, and estimates its accuracy on every bank item of the config (its answers
plus the expected score of the items it was not asked) with a 90% interval (a model that answers every item right or every item wrong is said to lie outside the
calibrated range rather than given a narrow interval). The bank was calibrated on the answers as of
{bank.created_at[:10]} of {len(bank.models)} models in {len(families)} families
({', '.join(families[:12])}{' …' if len(families) > 12 else ''}); their abilities, the ability
scale's support, are in the file. {measured}
"""


def bank_path(release: Path) -> Path:
    path = Path(release) / BANK_FILE
    if not path.is_file():
        raise BenchsmithError(f"{release}: this release carries no item bank ({BANK_FILE}); build it from a workspace "
                              "with answer runs on its items, or use `run --adaptive --bank` with `analyze calibrate`")
    return path


def evaluate_release_adaptive(ws: Workspace, release: str, specs: list, settings_k: int, *, stop_se: float | None = None,
                              batch: int = 1, prompt: str = "standard", concurrency: int = 16) -> tuple[list, dict]:
    """`evaluate --release PATH:CONFIG --adaptive K`: each model's adaptive run on the config with the
    release's own bank (the runs live in `ws`, the per-user workspace by default)."""
    from evaluation.adaptive_run import PLAN_MAKERS, AdaptiveSettings, run_adaptive
    from evaluation.datasets import split_release_arg
    from evaluation.runner import RunRequest
    from evaluation.sender import SenderSettings
    from filtering.irt.adaptive_plan import open_plan

    if not PLAN_MAKERS:
        PLAN_MAKERS.append(open_plan)
    path, config = split_release_arg(release)
    bank = bank_path(path)
    dataset = ReleaseDataset(path, config, ws.blobs)
    requests = [RunRequest(spec.decoded_as(dataset.manifest.run_decoding()), prompt, "implicit", dataset,
                           settings=SenderSettings(concurrency=concurrency, timeout_s=spec.timeout_s,
                                                   max_retries=spec.max_retries)) for spec in specs]
    return run_adaptive(ws, requests, AdaptiveSettings(settings_k, bank, stop_se, batch))
