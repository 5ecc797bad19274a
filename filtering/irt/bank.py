"""The item bank for adaptive runs (`benchsmith analyze calibrate`): every item's 2PL parameters
from the same fit as `analyze items` (current records only), its content hash and facet, the
ability scale (mean 0, sd 1 over the calibrating models) with each calibrating model's ability,
and — where the models fall into three families or more — the likelihood weight and interval scale
of its adaptive tests and the error and interval coverage of an adaptive run, all from leaving each
family out in turn (`tuning`, `validation`)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curation.core.errors import BenchsmithError
from curation.core.store import ItemQuery
from curation.core.workspace import Workspace
from evaluation.runlog import now_iso
from filtering.irt.adaptive import AdaptiveTest, Setting
from filtering.irt.analysis import usable
from filtering.irt.families import model_families
from filtering.irt.responses import Responses
from filtering.irt.tuning import leave_families_out
from filtering.irt.twopl import fit_2pl

BANK_FORMAT = "benchsmith-item-bank/1"
METHOD = "2PL, joint MAP (as `analyze items`), abilities standardised over the calibrating models"
VALIDATION_K = 100
LEVEL = 0.9
# items the cross-validation tests on: a bank's weight and interval scale depend on how its items carry
# over to a new family, not on how many there are, and each simulated answer costs a pass over every
# item (a 43,637-item bank took 17 s to tune; a seeded sample of this many takes a tenth of that)
TUNING_ITEMS = 4000


class BankItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    content_hash: str | None = None
    discrimination: float
    difficulty: float
    facet: str | None = None


class BankModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    family: str
    ability: float
    share_correct: float | None = None


class BankSetting(BaseModel):
    """For adaptive tests of up to k answers: the likelihood weight of the ability posterior and the
    factor on the estimate's standard error (`tuning`)."""

    model_config = ConfigDict(extra="forbid")
    k: int
    likelihood_weight: float
    interval_scale: float


class BankValidation(BaseModel):
    """Leave-one-family-out: each family's models tested adaptively on a bank fitted without it,
    with the likelihood weight and interval scale this same cross-validation chose (so the figures
    lean a little optimistic: `benchmarks/adaptive_bench.py` holds families out of the choice too)."""

    model_config = ConfigDict(extra="forbid")
    k: int
    families: int
    models: int
    mae: float  # of the estimated accuracy, adaptive run of k items
    random_mae: float  # of the share correct on k items drawn at random (expected, exact)
    ratio: float
    coverage: float  # of the 90% interval
    level: float = LEVEL
    items: int | None = None  # bank items the tests drew from and were scored on (None: all of them)
    mae_by_weight: dict[str, float] = Field(default_factory=dict)  # the likelihood weights tried


class ItemBank(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str = BANK_FORMAT
    created_at: str
    source: str
    method: str = METHOD
    converged: bool = True
    schedule: list[BankSetting] = Field(default_factory=list)  # cross-validated; none: weight 1, scale 1
    items: list[BankItem]
    models: list[BankModel]
    stale_skipped: int = 0
    validation: BankValidation | None = None
    notes: list[str] = Field(default_factory=list)

    def test(self, items: list[str] | None = None) -> AdaptiveTest:
        """An adaptive test over these bank items (all by default)."""
        by_id = self.by_id()
        chosen = self.items if items is None else [by_id[i] for i in items]
        facets = [item.facet for item in chosen]
        return AdaptiveTest([i.id for i in chosen], np.array([i.discrimination for i in chosen]),
                            np.array([i.difficulty for i in chosen]), [m.ability for m in self.models],
                            facets if any(facets) else None,
                            [Setting(s.k, s.likelihood_weight, s.interval_scale) for s in self.schedule])

    def by_id(self) -> dict[str, BankItem]:
        return {item.id: item for item in self.items}


def calibrate(responses: Responses, facets: dict[str, str | None] | None = None, validate_k: int = VALIDATION_K
              ) -> ItemBank:
    responses, notes = usable(responses)
    y, w = np.nan_to_num(responses.correct), responses.answered.astype(float)
    fit = fit_2pl(y, w)
    if not fit.converged:
        notes.append(f"the fit stopped after {fit.iterations} rounds before every item settled")
    families = model_families(responses.models)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.nansum(responses.correct, axis=1) / responses.answered.sum(axis=1)
    facets = facets or {}
    bank = ItemBank(
        created_at=now_iso(), source=responses.source, converged=fit.converged, stale_skipped=responses.stale_skipped,
        items=[BankItem(id=i, content_hash=responses.hashes.get(i), discrimination=round(float(fit.a[j]), 5),
                        difficulty=round(float(fit.b[j]), 5), facet=facets.get(i))
               for j, i in enumerate(responses.items)],
        models=[BankModel(model=m, family=families[r], ability=round(float(fit.theta[r]), 5),
                          share_correct=None if not np.isfinite(shares[r]) else round(float(shares[r]), 5))
                for r, m in enumerate(responses.models)],
        notes=notes)
    if validate_k > 0:
        validate(bank, responses, validate_k, facets)
    return bank


def validate(bank: ItemBank, responses: Responses, k: int, facets: dict[str, str | None]) -> None:
    """Set the bank's likelihood weight, interval scale and validation from leaving each family out."""
    sampled = len(responses.items) > TUNING_ITEMS
    if sampled:
        responses = responses.take(items=tuning_sample(responses.items, TUNING_ITEMS))
    facet_list = [facets.get(i) for i in responses.items]
    transfer = leave_families_out(responses, k, facet_list if any(facet_list) else None)
    if transfer is None:
        bank.notes.append("no cross-validation: it needs models of at least 3 families (the likelihood is taken "
                          "at face value and the interval is not checked)")
        return
    bank.schedule = [BankSetting(k=s.k, likelihood_weight=s.likelihood_weight, interval_scale=s.interval_scale)
                     for s in transfer.schedule]
    y = responses.correct
    random_mae = float(np.mean([random_subset_mae(y[row][~np.isnan(y[row])], k) for row in transfer.rows]))
    mae = float(np.abs(transfer.errors).mean())
    bank.validation = BankValidation(
        k=k, families=transfer.families, models=len(transfer.rows), mae=round(mae, 4),
        random_mae=round(random_mae, 4), ratio=round(mae / random_mae, 3) if random_mae else 0.0,
        coverage=round(float(transfer.covered.mean()), 3), items=len(responses.items) if sampled else None,
        mae_by_weight={str(w): v for w, v in transfer.mae_by_weight.items()})


def tuning_sample(items: list[str], size: int) -> np.ndarray:
    """Indices of `size` items, in bank order, chosen by a hash of each id: the same items whatever
    the bank's order, and a rebuild of the same bank tunes on the same sample."""
    keys = np.array([zlib.crc32(item.encode("utf-8")) for item in items], dtype=np.int64)
    return np.sort(np.argsort(keys, kind="stable")[:size])


def random_subset_mae(row: np.ndarray, k: int) -> float:
    """Mean absolute error of the share correct on k of a model's answers drawn at random (without
    replacement) as an estimate of its share on all of them: exact, from the hypergeometric law of
    how many of the k are correct."""
    n = len(row)
    if k >= n:
        return 0.0
    from scipy.stats import hypergeom

    right = int(np.sum(row))
    counts = np.arange(k + 1)
    return float(np.sum(hypergeom.pmf(counts, n, right, k) * np.abs(counts / k - right / n)))


def store_facets(ws: Workspace, item_ids: list[str]) -> dict[str, str | None]:
    """Each item's part (else subject) in the workspace's store: what an adaptive run balances over
    (read from the store's facet columns, no item parsed)."""
    columns = ws.store.columns(["part", "subject"], ItemQuery(ids=list(item_ids)))
    return {i: part or subject for i, part, subject in zip(columns["id"], columns["part"], columns["subject"],
                                                            strict=True)}


def write_bank(bank: ItemBank, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bank.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return path


def load_bank(path: Path) -> ItemBank:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != BANK_FORMAT:
            raise BenchsmithError(f"{path}: not an item bank written by `benchsmith analyze calibrate` "
                                  f"(format {data.get('format') if isinstance(data, dict) else None!r})")
        bank = ItemBank.model_validate(data)
    except OSError as error:
        raise BenchsmithError(f"{path}: cannot read the item bank: {error.strerror}") from None
    except UnicodeDecodeError:
        raise BenchsmithError(f"{path}: not an item bank written by `benchsmith analyze calibrate` "
                              "(not UTF-8 text)") from None
    except json.JSONDecodeError as error:
        raise BenchsmithError(f"{path}: not an item bank written by `benchsmith analyze calibrate` (broken JSON at "
                              f"line {error.lineno}, column {error.colno}: {error.msg}; a copy cut short?)") from None
    except ValidationError as error:
        first = error.errors()[0]
        raise BenchsmithError(f"{path}: not an item bank written by `benchsmith analyze calibrate` "
                              f"({'.'.join(map(str, first['loc']))}: {first['msg']})") from None
    if not bank.items or not bank.models:
        raise BenchsmithError(f"{path}: the item bank has no items or no calibrating models")
    return bank
