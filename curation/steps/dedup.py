"""Near-duplicate removal at pool scale.

The rule K-MetBench used is `difflib.SequenceMatcher(None, a, b).ratio() >= 0.6`. Computing
it for all pairs of a large pool takes CPU-hours, so candidates come from a prefilter that
can only over-approximate it, and every candidate is then verified with difflib itself:

- `difflib` (default): rapidfuzz's `fuzz.ratio` is 2·LCS/(|a|+|b|), difflib's ratio is
  2·M/(|a|+|b|) with M the characters in its matching blocks, a common subsequence, so
  M <= LCS and `fuzz.ratio >= 100·ratio` for every pair. A rapidfuzz cut at the threshold
  loses nothing; the verified set equals all-pairs difflib exactly.
- `fuzz`: rapidfuzz's ratio is the decision itself (faster, merges a little more).
- `lsh`: MinHash over character 3-grams proposes candidates (for pools too large to
  compare within scope), verified with difflib; recall is measured, not guaranteed.

difflib is asymmetric for texts of 200+ characters (autojunk), so the earlier item of a
pair (pool order: session, exam, number, id) is always the first argument. Texts are
canonical (NFKC, markers and whitespace stripped, options sorted) so permuted options are
caught. A pair is merged only if its stems also pass a similarity gate (same options under
a new stem is a new question; `stem_gate=0` gives the bare rule) and no antonym swap or
negation separates them (those go to review). `require_same_answer` is stricter still: the
correct options' texts must agree.
"""

from __future__ import annotations

import difflib
import multiprocessing as mp
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
from rapidfuzz import fuzz, process

from curation.item import Item
from curation.steps.antonyms import AntonymLexicon
from curation.steps.canonical import canonical_item, canonical_stem

Method = Literal["difflib", "fuzz", "lsh"]
Scope = Literal["all", "exam", "subject"]
Verdict = Literal["merged", "stem_gate", "inverted", "answer_differs"]
METHODS: tuple[Method, ...] = get_args(Method)
SCOPES: tuple[Scope, ...] = get_args(Scope)
ACTIVE_STATUSES = ("extracted", "in_review", "accepted")
_STATUS_RANK = {"accepted": 0, "in_review": 1, "extracted": 2}


@dataclass(frozen=True)
class DedupConfig:
    threshold: float = 0.6
    method: Method = "difflib"
    scope: Scope = "exam"
    stem_gate: float = 0.6
    require_same_answer: bool = False
    workers: int = 2
    lsh_bands: int = 64
    lsh_rows: int = 2


@dataclass(frozen=True)
class Pair:
    first: str  # earlier in pool order
    second: str
    ratio: float
    stem_ratio: float
    verdict: Verdict
    swaps: tuple[tuple[str, str], ...] = ()
    same_answer: bool | None = None


@dataclass
class DedupResult:
    config: DedupConfig
    pool: int
    candidates: int
    pairs: list[Pair]
    clusters: list[list[str]]  # kept item first
    excluded: dict[str, tuple[str, int, float]] = field(default_factory=dict)  # id -> (kept id, cluster, ratio)

    def verdict_counts(self) -> Counter:
        return Counter(pair.verdict for pair in self.pairs)

    def summary(self) -> dict:
        merged = [pair for pair in self.pairs if pair.verdict == "merged"]
        bins: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for pair in merged:
            low = min(int(pair.ratio * 10), 9) / 10
            key = f"{low:.1f}-{low + 0.1:.1f}"
            bins[key][0] += 1
            bins[key][1] += bool(pair.same_answer)
        return {
            "pool": self.pool,
            "candidate_pairs": self.candidates,
            "pairs_over_threshold": len(self.pairs),
            **{f"pairs_{verdict}": n for verdict, n in sorted(self.verdict_counts().items())},
            "clusters": len(self.clusters),
            "excluded": len(self.excluded),
            "largest_cluster": max((len(c) for c in self.clusters), default=0),
            "merged_same_answer_by_ratio": {k: {"pairs": v[0], "same_answer": v[1]} for k, v in sorted(bins.items())},
        }


# -- pair finding within one group ------------------------------------------------------------
_texts: list[str] = []


def _init_worker(texts: list[str]) -> None:
    global _texts
    _texts = texts


def _verify_chunk(args: tuple[list[tuple[int, int]], float]) -> list[tuple[int, int, float]]:
    pairs, threshold = args
    verified = []
    for i, j in pairs:
        ratio = difflib.SequenceMatcher(None, _texts[i], _texts[j]).ratio()
        if ratio >= threshold:
            verified.append((i, j, ratio))
    return verified


def verify_with_difflib(texts: list[str], candidates: list[tuple[int, int]], threshold: float,
                        workers: int) -> list[tuple[int, int, float]]:
    """difflib ratio for each candidate (i < j, i earlier), keeping those at the threshold."""
    if workers <= 1 or len(candidates) < 5000:
        _init_worker(texts)
        return _verify_chunk((candidates, threshold))
    size = max(1000, len(candidates) // (workers * 8))
    chunks = [(candidates[k : k + size], threshold) for k in range(0, len(candidates), size)]
    context = mp.get_context("fork")
    with context.Pool(workers, initializer=_init_worker, initargs=(texts,)) as pool:
        return [pair for chunk in pool.imap(_verify_chunk, chunks) for pair in chunk]


def fuzz_candidates(texts: list[str], threshold: float, workers: int, rows: int = 512) -> list[tuple[int, int, float]]:
    """Pairs (i < j) whose rapidfuzz ratio reaches the threshold (a superset of difflib's)."""
    found: list[tuple[int, int, float]] = []
    cutoff = threshold * 100 - 1e-6
    for start in range(0, len(texts), rows):
        block = texts[start : start + rows]
        scores = process.cdist(block, texts[start:], scorer=fuzz.ratio, score_cutoff=cutoff,
                               dtype=np.float32, workers=workers)
        scores = np.triu(scores, k=1)  # row r holds item start+r against items start.. ; keep j > i
        rows_idx, cols_idx = np.nonzero(scores >= cutoff)
        found.extend((start + int(r), start + int(c), float(scores[r, c]) / 100)
                     for r, c in zip(rows_idx, cols_idx, strict=True))
    return found


def _shingle_hashes(text: str) -> np.ndarray:
    grams = {text[k : k + 3] for k in range(max(1, len(text) - 2))}
    return np.fromiter((zlib.crc32(gram.encode("utf-8")) for gram in grams), dtype=np.uint64, count=len(grams))


def lsh_candidates(texts: list[str], bands: int, rows: int, seed: int = 13) -> list[tuple[int, int]]:
    """MinHash LSH over character 3-grams: pairs sharing any band of their signatures."""
    prime = np.uint64(4294967311)  # > 2**32, so (a*h + b) stays below 2**64
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**32 - 1, size=bands * rows, dtype=np.uint64)
    b = rng.integers(0, 2**32 - 1, size=bands * rows, dtype=np.uint64)
    signatures = np.empty((len(texts), bands * rows), dtype=np.uint64)
    for index, text in enumerate(texts):
        hashes = _shingle_hashes(text)
        signatures[index] = ((np.outer(hashes, a) + b) % prime).min(axis=0)
    pairs: set[tuple[int, int]] = set()
    for band in range(bands):
        buckets: dict[bytes, list[int]] = defaultdict(list)
        for index, row in enumerate(signatures[:, band * rows : (band + 1) * rows]):
            buckets[row.tobytes()].append(index)
        for members in buckets.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    pairs.add((members[x], members[y]))
    return sorted(pairs)


def find_pairs(texts: list[str], config: DedupConfig) -> tuple[int, list[tuple[int, int, float]]]:
    """(candidate count, pairs i < j with their ratio at or above the threshold)."""
    if config.method == "lsh":
        candidates = lsh_candidates(texts, config.lsh_bands, config.lsh_rows)
        cutoff = config.threshold * 100 - 1e-6
        candidates = [(i, j) for i, j in candidates if fuzz.ratio(texts[i], texts[j], score_cutoff=cutoff)]
        return len(candidates), verify_with_difflib(texts, candidates, config.threshold, config.workers)
    scored = fuzz_candidates(texts, config.threshold, config.workers)
    if config.method == "fuzz":
        return len(scored), scored
    verified = verify_with_difflib(texts, [(i, j) for i, j, _ in scored], config.threshold, config.workers)
    return len(scored), verified


def all_pairs_difflib(texts: Sequence[str], threshold: float) -> set[tuple[int, int]]:
    """The reference: difflib on every pair (with difflib's own exact upper bounds as a shortcut)."""
    found = set()
    for j in range(len(texts)):
        matcher = difflib.SequenceMatcher(None)
        matcher.set_seq2(texts[j])
        for i in range(j):
            matcher.set_seq1(texts[i])
            if (matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold
                    and matcher.ratio() >= threshold):
                found.add((i, j))
    return found


# -- the whole pool ------------------------------------------------------------------------------
def pool_order_key(item: Item) -> tuple:
    return (item.source.session or "", item.source.exam, item.source.number or 0, item.id)


def _scope_key(item: Item, scope: Scope) -> str:
    if scope == "exam":
        return item.source.exam
    if scope == "subject":
        return f"{item.source.exam}\x00{item.source.subject or item.taxonomy.subject or ''}"
    return ""


def _answer_texts(item: Item) -> tuple[str, ...]:
    return tuple(sorted(canonical_stem_text(item.options[n - 1].text) for n in item.answer_list()))


def canonical_stem_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, x: str, y: str) -> None:
        rx, ry = self.find(x), self.find(y)
        if rx != ry:
            self.parent[ry] = rx


def dedup_items(items: list[Item], config: DedupConfig, antonyms: AntonymLexicon | None = None) -> DedupResult:
    antonyms = antonyms or AntonymLexicon()
    pool = sorted((item for item in items if item.status in ACTIVE_STATUSES), key=pool_order_key)
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        groups[_scope_key(item, config.scope)].append(item)

    pairs: list[Pair] = []
    candidates = 0
    for members in groups.values():
        texts = [canonical_item(item) for item in members]
        count, found = find_pairs(texts, config)
        candidates += count
        for i, j, ratio in found:
            pairs.append(_classify(members[i], members[j], ratio, config, antonyms))

    forest = _UnionFind()
    best_ratio: dict[str, float] = {}
    for pair in pairs:
        if pair.verdict == "merged":
            forest.union(pair.first, pair.second)
            best_ratio[pair.second] = max(best_ratio.get(pair.second, 0), pair.ratio)
            best_ratio[pair.first] = max(best_ratio.get(pair.first, 0), pair.ratio)
    by_root: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        if item.id in forest.parent:
            by_root[forest.find(item.id)].append(item)
    clusters, excluded = [], {}
    for number, members in enumerate(sorted(by_root.values(), key=lambda m: pool_order_key(m[0])), start=1):
        ranked = sorted(members, key=lambda item: (_STATUS_RANK.get(item.status, 3), pool_order_key(item)))
        kept = ranked[0]
        clusters.append([item.id for item in ranked])
        for item in ranked[1:]:
            excluded[item.id] = (kept.id, number, best_ratio.get(item.id, 0.0))
    return DedupResult(config, len(pool), candidates, pairs, clusters, excluded)


def _classify(first: Item, second: Item, ratio: float, config: DedupConfig, antonyms: AntonymLexicon) -> Pair:
    stem_ratio = difflib.SequenceMatcher(None, canonical_stem(first), canonical_stem(second)).ratio()
    swaps = tuple(antonyms.swaps(canonical_stem_text(first.stem), canonical_stem_text(second.stem)))
    same_answer = _answer_texts(first) == _answer_texts(second) if first.answer and second.answer else None
    verdict: Verdict
    if stem_ratio < config.stem_gate:
        verdict = "stem_gate"
    elif swaps:
        verdict = "inverted"
    elif config.require_same_answer and same_answer is False:
        verdict = "answer_differs"
    else:
        verdict = "merged"
    return Pair(first.id, second.id, ratio, stem_ratio, verdict, swaps, same_answer)
