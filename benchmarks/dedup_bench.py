"""Dedup speed and recall.

(1) The 1,460 real Q-Net items (../shared/realdata/qnet_csv): the exact difflib-equivalent
    pair set (rapidfuzz prefilter + difflib verification) against plain all-pairs difflib,
    side by side, within exam; the two pair sets must be equal.
(2) 70,000 generated exam-like items (23 exams) with planted near-duplicates (permuted
    options, small edits, reformatting): time on 2 cores (target <= 5 min) and recall
    against difflib on all planted pairs plus a uniform sample of pairs (target >= 0.99).

    python benchmarks/dedup_bench.py [--items 70000] [--runs 3] [--skip-real]
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from curation.importers import import_file
from curation.item import parse_item
from curation.steps.canonical import canonical_item
from curation.steps.dedup import DedupConfig, dedup_items, pool_order_key
from curation.workspace import init_workspace

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"

SUBJECTS = ["대기", "구름", "바람", "기압", "강수", "복사", "기단", "전선", "태풍", "해양", "관측", "예보"]
VERBS = ["증가할 때", "감소할 때", "일정할 때", "급변할 때", "유지될 때"]
ASKS = ["옳은 것은?", "옳지 않은 것은?", "가장 적절한 것은?", "해당하지 않는 것은?", "모두 고른 것은?"]
NOUNS = ["기온", "습도", "기압", "풍속", "일사량", "운량", "강수량", "시정", "이슬점", "온위", "혼합비", "와도"]


def generate_pool(n: int, seed: int = 3, dup_rate: float = 0.1) -> tuple[list[dict], list[tuple[str, str]]]:
    rng = random.Random(seed)
    records, planted = [], []
    while len(records) < n:
        i = len(records)
        exam = f"시험{i % 23:02d}"
        stem = (f"{rng.choice(SUBJECTS)} 단원 {rng.randint(1, 10**6)}: {rng.choice(NOUNS)}과 {rng.choice(NOUNS)}이 "
                f"{rng.choice(VERBS)} {rng.choice(NOUNS)}의 {rng.randint(1, 999)} 단위 변화로 {rng.choice(ASKS)}")
        options = [f"{rng.choice(NOUNS)} {rng.randint(1, 9999)} {rng.choice(VERBS)}" for _ in range(4)]
        base = {"id": f"g{i:06d}", "source": {"exam": exam, "session": f"{2000 + i % 20}-{i % 3 + 1}"},
                "stem": stem, "options": [{"text": o} for o in options], "answer": rng.randint(1, 4)}
        records.append(base)
        if rng.random() < dup_rate and len(records) < n:
            copy = _plant(base, rng, len(records))
            records.append(copy)
            planted.append((base["id"], copy["id"]))
    return records, planted


def _plant(base: dict, rng: random.Random, index: int) -> dict:
    options = [dict(o) for o in base["options"]]
    stem = base["stem"]
    kind = rng.choice(["permute", "edit", "reformat"])
    if kind == "permute":
        rng.shuffle(options)
    elif kind == "edit":
        chars = list(stem)
        for _ in range(rng.randint(1, 6)):
            chars[rng.randrange(len(chars))] = rng.choice("가나다라마바사아")
        stem = "".join(chars)
    else:
        stem = stem.replace(" ", "  ").replace("?", " ?")
        options = [{"text": f"({k}) {o['text']}"} for k, o in enumerate(options, start=1)]
    copy = {**base, "id": f"g{index:06d}", "stem": stem, "options": options,
            "source": {**base["source"], "session": f"{2000 + index % 20}-{index % 3 + 1}"}}
    return copy


def bench_real(runs: int) -> None:
    folder = REALDATA / "qnet_csv"
    if not folder.is_dir():
        print("(1) skipped: ../shared/realdata/qnet_csv is not present")
        return
    workspace = init_workspace(Path(tempfile.mkdtemp()) / "ws")
    for path in sorted(folder.glob("*.csv")):
        import_file(path, workspace.store)
    items = [stored.item for stored in workspace.store.iter_items()]
    fast_times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = dedup_items(items, DedupConfig(stem_gate=0))
        fast_times.append(time.perf_counter() - started)
    groups = defaultdict(list)
    for item in sorted(items, key=pool_order_key):
        groups[item.source.exam].append(canonical_item(item))
    started = time.perf_counter()
    reference = 0
    for texts in groups.values():
        for j in range(len(texts)):
            for i in range(j):
                reference += difflib.SequenceMatcher(None, texts[i], texts[j]).ratio() >= 0.6
    brute = time.perf_counter() - started
    fast = statistics.median(fast_times)
    print(f"(1) {len(items)} real items, within exam: prefilter+difflib median {fast:.2f} s "
          f"({len(result.pairs)} pairs); plain all-pairs difflib {brute:.1f} s ({reference} pairs); "
          f"speed-up {brute / fast:.0f}x; sets equal: {len(result.pairs) == reference}")


def bench_generated(n: int, runs: int, sample: int) -> None:
    records, planted = generate_pool(n)
    items = [parse_item(record) for record in records]
    by_id = {item.id: item for item in items}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = dedup_items(items, DedupConfig(stem_gate=0, workers=2))
        times.append(time.perf_counter() - started)
    found = {(p.first, p.second) for p in result.pairs} | {(p.second, p.first) for p in result.pairs}

    def truth(a: str, b: str) -> bool:
        first, second = sorted((by_id[a], by_id[b]), key=pool_order_key)
        return difflib.SequenceMatcher(None, canonical_item(first), canonical_item(second)).ratio() >= 0.6

    planted_true = [pair for pair in planted if truth(*pair)]
    planted_hit = sum(pair in found for pair in planted_true)
    rng = random.Random(11)
    by_exam = defaultdict(list)
    for item in items:
        by_exam[item.source.exam].append(item.id)
    exams = list(by_exam)
    sampled = []
    for _ in range(sample):
        members = by_exam[rng.choice(exams)]
        sampled.append(tuple(rng.sample(members, 2)))
    sample_true = [pair for pair in sampled if truth(*pair)]
    sample_hit = sum(pair in found for pair in sample_true)
    recall = (planted_hit + sample_hit) / max(1, len(planted_true) + len(sample_true))
    print(f"(2) {n} generated items, 23 exams, 2 workers: median {statistics.median(times):.1f} s "
          f"(target <= 300 s); {len(result.pairs)} pairs, {len(result.excluded)} excluded; recall vs difflib "
          f"{recall:.4f} on {len(planted_true)} planted + {len(sample_true)} positive of {sample} sampled pairs "
          f"(target >= 0.99)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=70_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--skip-real", action="store_true")
    args = parser.parse_args()
    if not args.skip_real:
        bench_real(args.runs)
    bench_generated(args.items, args.runs, args.sample)


if __name__ == "__main__":
    main()
