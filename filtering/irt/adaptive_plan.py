"""An item bank as the plan of an adaptive run (`evaluation.adaptive_run.AdaptivePlan`): which bank
items a model can be asked here (in the selection, sendable to it, unchanged since calibration),
the next ones to ask, and the accuracy estimate on all of them. A bank file is read once per process
and its test made once per item set: the models of one run share them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from curation.core.errors import BenchsmithError
from filtering.irt.adaptive import ABOVE, AdaptiveTest
from filtering.irt.bank import ItemBank, load_bank

LEVEL = 0.9


class BankPlan:
    def __init__(self, bank: ItemBank, current: dict[str, str],
                 tests: dict[tuple[str, ...], AdaptiveTest] | None = None):
        self.bank = bank
        stale = [i.id for i in bank.items if i.id in current and i.content_hash and i.content_hash != current[i.id]]
        unchecked = [i.id for i in bank.items if i.id in current and not i.content_hash]
        self.items = [i.id for i in bank.items if i.id in current and i.id not in set(stale)]
        outside_bank = len(set(current) - {i.id for i in bank.items})
        self.stale = len(stale)
        self.notes: list[str] = []
        if stale:
            self.notes.append(f"{len(stale)} bank item(s) edited since calibration (content hash differs): not asked "
                              f"and not estimated · 보정 뒤 수정된 문항 {len(stale)}개는 묻지 않습니다 "
                              f"({', '.join(stale[:5])}{' …' if len(stale) > 5 else ''})")
        if unchecked:
            self.notes.append(f"{len(unchecked)} bank item(s) without a content hash (calibrated from a matrix file): "
                              "not checked for edits · 내용 해시가 없는 문항은 수정 여부를 확인하지 못합니다")
        if outside_bank:
            self.notes.append(f"{outside_bank} item(s) of the selection are not in the bank: not estimated · "
                              f"문제은행에 없는 문항 {outside_bank}개는 추정하지 않습니다")
        if not self.items:
            raise BenchsmithError("no bank item can be asked here: none of the bank's items is in the selection with "
                                  "the content it was calibrated on" + (f" ({len(stale)} edited since)" if stale else ""))
        tests = {} if tests is None else tests
        key = tuple(self.items)
        if key not in tests:
            tests[key] = bank.test(self.items)
        self.test = tests[key]
        validation = bank.validation
        self.summary: dict[str, Any] = {
            "bank_items": len(bank.items), "calibrated_on": len(bank.models), "calibrated_at": bank.created_at,
            "stale": len(stale),
            "cross_validation": validation.model_dump(mode="json") if validation is not None else None}

    def _indexed(self, answers: list[tuple[str, float | None]]) -> list[tuple[int, float | None]]:
        position = self.test.position
        return [(position[item_id], value) for item_id, value in answers if item_id in position]

    def next_items(self, answers: list[tuple[str, float | None]], count: int, seed: str) -> list[str]:
        return [self.test.items[j] for j in self.test.next_items(self._indexed(answers), count, seed)]

    def estimate(self, answers: list[tuple[str, float | None]]) -> dict[str, Any]:
        found = self.test.estimate(self._indexed(answers), LEVEL)
        data = found.as_dict()
        data.pop("asked")
        if found.outside is not None:
            data["note"] = (("every determined answer right: above the calibrated range, the interval runs to the "
                             "highest accuracy these answers allow · 모두 맞혀 보정 범위 위: 구간은 가능한 최고치까지")
                            if found.outside == ABOVE else
                            ("every determined answer wrong: below the calibrated range, the interval runs to the "
                             "lowest accuracy these answers allow · 모두 틀려 보정 범위 아래: 구간은 가능한 최저치까지"))
        return data


def open_plan(bank_path: Path, current: dict[str, str]) -> BankPlan:
    try:
        stat = bank_path.stat()
    except OSError:
        return BankPlan(load_bank(bank_path), current)  # load_bank says what is wrong with the path
    bank, tests = _loaded(str(bank_path.resolve()), stat.st_mtime_ns, stat.st_size)
    return BankPlan(bank, current, tests)


@lru_cache(maxsize=8)
def _loaded(path: str, mtime_ns: int, size: int) -> tuple[ItemBank, dict[tuple[str, ...], AdaptiveTest]]:
    return load_bank(Path(path)), {}
