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
correct options' texts must agree (canonical text: `2.5MPa` is `2.5 MPa`).

Exact duplicates (equal canonical text) are found over the whole pool whatever the scope,
and near-duplicate search runs over distinct texts only. A pair at `conflict_ratio` or above
whose answers differ is an answer conflict: both go to review, neither is excluded. An exact
copy with the same key as another item in conflict is still excluded as its duplicate (the
copy kept carries its conflicts), so each key of the conflict stays in review once.
"""

from __future__ import annotations

import difflib
import multiprocessing as mp
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
from rapidfuzz import fuzz, process

from curation.core.facets import IN_PLAY, REVIEW_RANK, resolved_subject
from curation.core.item import Item
from curation.progress import Advance, no_progress
from curation.steps.antonyms import AntonymLexicon
from curation.steps.canonical import canonical_answer, canonical_item, canonical_stem

Method = Literal["difflib", "fuzz", "lsh"]
Scope = Literal["all", "exam", "subject"]
Verdict = Literal["merged", "stem_gate", "inverted", "answer_differs", "answer_conflict"]
METHODS: tuple[Method, ...] = get_args(Method)
SCOPES: tuple[Scope, ...] = get_args(Scope)


@dataclass(frozen=True)
class DedupConfig:
    threshold: float = 0.6
    method: Method = "difflib"
    scope: Scope = "exam"
    stem_gate: float = 0.6
    require_same_answer: bool = False
    same_answer_below: float | None = None  # a pair with a ratio below this must share the answer
    conflict_ratio: float = 0.95
    workers: int = 2
    lsh_bands: int = 64
    lsh_rows: int = 2


# The seeds' rule (K-MetBench: difflib >= 0.6, reproducible) and a stricter one that merges
# only near-identical text, or text at 0.8 or above with the same correct answer.
PRESETS: dict[str, dict[str, object]] = {
    "kmetbench": {},
    "precise": {"threshold": 0.8, "same_answer_below": 0.95},
}


@dataclass(frozen=True)
class Pair:
    first: str  # earlier in pool order
    second: str
    ratio: float
    stem_ratio: float
    verdict: Verdict
    swaps: tuple[tuple[str, str], ...] = ()
    same_answer: bool | None = None
    exact: bool = False  # equal canonical text
    cross_scope: bool = False  # an exact duplicate outside the near-duplicate scope (another exam)


@dataclass
class DedupResult:
    config: DedupConfig
    pool: int
    candidates: int
    pairs: list[Pair]
    clusters: list[list[str]]  # kept item first
    excluded: dict[str, tuple[str, int, float]] = field(default_factory=dict)  # id -> (kept id, cluster, ratio)
    exact_excluded: dict[str, bool] = field(default_factory=dict)  # excluded as an exact duplicate -> across scope

    def verdict_counts(self) -> Counter:
        return Counter(pair.verdict for pair in self.pairs)

    def conflicts(self) -> list[Pair]:
        return [pair for pair in self.pairs if pair.verdict == "answer_conflict"]

    def kept_for(self, item_id: str) -> str:
        return self.excluded[item_id][0] if item_id in self.excluded else item_id

    def standing_conflicts(self) -> dict[tuple[str, str], list[Pair]]:
        """Answer conflicts between items left in play (ids sorted) -> the pairs behind each; an
        excluded exact copy's conflicts pass to the copy kept for it."""
        standing: dict[tuple[str, str], list[Pair]] = defaultdict(list)
        for pair in self.conflicts():
            first, second = sorted((self.kept_for(pair.first), self.kept_for(pair.second)))
            standing[(first, second)].append(pair)
        return dict(standing)

    def summary(self) -> dict:
        return {
            "pool": self.pool,
            "candidate_pairs": self.candidates,
            "pairs_over_threshold": len(self.pairs),
            **{f"pairs_{verdict}": n for verdict, n in sorted(self.verdict_counts().items())},
            "clusters": len(self.clusters),
            "excluded": len(self.excluded),
            "exact_duplicates_excluded": len(self.exact_excluded),
            "cross_scope_exact_excluded": sum(self.exact_excluded.values()),
            "answer_conflict_items": len({i for ends in self.standing_conflicts() for i in ends}),
            "conflict_copies_excluded": len({i for p in self.conflicts() for i in (p.first, p.second)} & set(self.excluded)),
            "largest_cluster": max((len(c) for c in self.clusters), default=0),
            "merged_same_answer_by_ratio": {band: {"pairs": len(pairs), "same_answer": sum(bool(p.same_answer) for p in pairs)}
                                            for band, pairs in merged_by_band(self.pairs).items()},
        }


BANDS = ("0.6-0.7", "0.7-0.8", "0.8-0.9", "0.9-1.0", "identical")


def ratio_band(pair: Pair) -> str:
    if pair.exact:
        return "identical"
    low = min(int(pair.ratio * 10), 9) / 10
    return f"{low:.1f}-{low + 0.1:.1f}"


def merged_by_band(pairs: list[Pair]) -> dict[str, list[Pair]]:
    """The merged pairs per ratio band, bands in order (below 0.6 only with a lower threshold)."""
    bands: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        if pair.verdict == "merged":
            bands[ratio_band(pair)].append(pair)
    return dict(sorted(bands.items(), key=lambda kv: (kv[0] == "identical", kv[0])))


# -- pair finding within one group ------------------------------------------------------------
_texts: list[str] = []


def _init_worker(texts: list[str]) -> None:
    global _texts
    _texts = texts


def _ratio_chunk(pairs: list[tuple[int, int]]) -> list[float]:
    """difflib's ratio(texts[i], texts[j]) per pair; one matcher per second text (its index is built once)."""
    order = sorted(range(len(pairs)), key=lambda k: pairs[k][1])
    ratios = [0.0] * len(pairs)
    matcher = difflib.SequenceMatcher(None)
    current = -1
    for k in order:
        i, j = pairs[k]
        if j != current:
            matcher.set_seq2(_texts[j])
            current = j
        matcher.set_seq1(_texts[i])
        ratios[k] = matcher.ratio()
    return ratios


def difflib_ratios(texts: list[str], pairs: list[tuple[int, int]], workers: int) -> list[float]:
    """difflib ratio for each (i, j), i the first argument, in `workers` processes for large batches."""
    if workers <= 1 or len(pairs) < 5000:
        _init_worker(texts)
        return _ratio_chunk(pairs)
    size = max(1000, len(pairs) // (workers * 8))
    chunks = [pairs[k : k + size] for k in range(0, len(pairs), size)]
    context = mp.get_context("fork")
    with context.Pool(workers, initializer=_init_worker, initargs=(texts,)) as pool:
        return [ratio for chunk in pool.imap(_ratio_chunk, chunks) for ratio in chunk]


def verify_with_difflib(texts: list[str], candidates: list[tuple[int, int]], threshold: float,
                        workers: int) -> list[tuple[int, int, float]]:
    """difflib ratio for each candidate (i, j), keeping those at the threshold."""
    ratios = difflib_ratios(texts, candidates, workers)
    return [(i, j, ratio) for (i, j), ratio in zip(candidates, ratios, strict=True) if ratio >= threshold]


def compact_alphabet(texts: list[str]) -> list[str]:
    """The texts with characters renamed by frequency, the commonest to code points below 256.

    A renaming is one-to-one, so every LCS (and rapidfuzz ratio) is unchanged; rapidfuzz looks
    code points below 256 up in an array instead of a hash map, about 5x faster on Hangul."""
    counts = Counter("".join(texts))
    rename = {char: chr(rank + 1) for rank, (char, _) in enumerate(counts.most_common())}
    return ["".join(map(rename.__getitem__, text)) for text in texts]


def fuzz_candidates(texts: list[str], threshold: float, workers: int, rows: int = 512,
                    advance: Advance = no_progress) -> list[tuple[int, int, float]]:
    """Pairs (i < j) whose rapidfuzz ratio reaches the threshold (a superset of difflib's)."""
    texts = compact_alphabet(texts)
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
        advance(len(block))
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


def candidate_pairs(texts: list[str], config: DedupConfig, reverse_too: Callable[[int, int], bool] | None = None,
                    advance: Advance = no_progress) -> tuple[int, list[tuple[int, int, float]]]:
    """(candidate count, oriented candidates (x, y, rapidfuzz score)) of one scope group.

    Candidates are (i, j), i < j; `reverse_too(i, j)` asks for (j, i) as well (difflib is
    asymmetric and a later copy of text i may follow text j in pool order)."""
    cutoff = config.threshold * 100 - 1e-6
    if config.method == "lsh":
        scored = [(i, j, score / 100) for i, j in lsh_candidates(texts, config.lsh_bands, config.lsh_rows)
                  if (score := fuzz.ratio(texts[i], texts[j], score_cutoff=cutoff))]
        advance(len(texts))
    else:
        scored = fuzz_candidates(texts, config.threshold, config.workers, advance=advance)
    return len(scored), scored + [(j, i, r) for i, j, r in scored if reverse_too and reverse_too(i, j)]


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
        return f"{item.source.exam}\x00{resolved_subject(item) or ''}"
    return ""


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


def dedup_items(items: list[Item], config: DedupConfig, antonyms: AntonymLexicon | None = None,
                advance: Advance = no_progress) -> DedupResult:
    """Pairs, clusters and exclusions for the active items; `advance(n)` reports items done."""
    antonyms = antonyms or AntonymLexicon()
    pool = sorted((item for item in items if item.status in IN_PLAY), key=pool_order_key)
    position = {item.id: k for k, item in enumerate(pool)}
    text_of = {item.id: canonical_item(item) for item in pool}
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        groups[_scope_key(item, config.scope)].append(item)

    # All groups' distinct texts in one list, so verification runs as one parallel batch.
    texts: list[str] = []
    holders: list[list[Item]] = []
    scored: list[tuple[int, int, float]] = []
    pairs: list[Pair] = []
    candidates = 0
    for members in groups.values():
        offset = len(holders)
        copies: dict[str, list[Item]] = {}  # distinct text -> its items, in pool order
        for item in members:
            copies.setdefault(text_of[item.id], []).append(item)
        texts += copies
        holders += copies.values()
        advance(len(members) - len(copies))
        pairs += _exact_copies(copies, config, antonyms)

        group = list(copies.values())

        def reverse_too(i: int, j: int, group: list[list[Item]] = group) -> bool:  # a copy of i follows j's first
            return position[group[j][0].id] < position[group[i][-1].id]

        count, found = candidate_pairs(list(copies), config, reverse_too, advance)
        candidates += count
        scored += [(offset + x, offset + y, score) for x, y, score in found]
    found = scored if config.method == "fuzz" else verify_with_difflib(
        texts, [(x, y) for x, y, _ in scored], config.threshold, config.workers)
    stems = [canonical_stem(same[0]) for same in holders]
    stem_ratios = difflib_ratios(stems, [(x, y) for x, y, _ in found], config.workers)
    for (x, y, ratio), stem_ratio in zip(found, stem_ratios, strict=True):
        pairs += [_classify(a, b, ratio, config, antonyms, stem_ratio)
                  for a in holders[x] for b in holders[y] if position[a.id] < position[b.id]]
    pairs += _cross_scope_exact(pool, text_of, config, antonyms)
    return _clusters(pool, pairs, config, candidates, text_of)


def _exact_copies(copies: dict[str, list[Item]], config: DedupConfig, antonyms: AntonymLexicon) -> list[Pair]:
    """Every pair of items with one canonical text within a scope group."""
    pairs = []
    for text, same in copies.items():
        ratio = difflib.SequenceMatcher(None, text, text).ratio() if len(same) > 1 else 0.0
        if ratio >= config.threshold:
            pairs += [_classify(a, b, ratio, config, antonyms, 1.0, exact=True)
                      for k, a in enumerate(same) for b in same[k + 1 :]]
    return pairs


def _cross_scope_exact(pool: list[Item], text_of: dict[str, str], config: DedupConfig,
                       antonyms: AntonymLexicon) -> list[Pair]:
    """Exact duplicates across scopes: each copy paired with the pool's first copy when that is in
    another scope, and with the first copy of its own key when that is another, in another scope
    (so that copies with one key in two scopes merge even when the first copy has another key)."""
    if config.scope == "all":
        return []
    by_text: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        by_text[text_of[item.id]].append(item)
    pairs = []
    for same in by_text.values():
        if len(same) < 2:
            continue
        first = same[0]
        first_of_key = {canonical_answer(first): first}
        for item in same[1:]:
            scope = _scope_key(item, config.scope)
            if scope != _scope_key(first, config.scope):
                pairs.append(_classify(first, item, 1.0, config, antonyms, 1.0, exact=True, cross_scope=True))
            twin = first_of_key.setdefault(canonical_answer(item), item)
            if twin is not item and twin is not first and scope != _scope_key(twin, config.scope):
                pairs.append(_classify(twin, item, 1.0, config, antonyms, 1.0, exact=True, cross_scope=True))
    return pairs


def _clusters(pool: list[Item], pairs: list[Pair], config: DedupConfig, candidates: int,
              text_of: dict[str, str]) -> DedupResult:
    forest = _UnionFind()
    best: dict[str, Pair] = {}
    for pair in pairs:
        if pair.verdict == "merged":
            forest.union(pair.first, pair.second)
            for item_id in (pair.first, pair.second):
                if item_id not in best or (pair.exact, pair.ratio) > (best[item_id].exact, best[item_id].ratio):
                    best[item_id] = pair
    in_conflict = {item_id for pair in pairs if pair.verdict == "answer_conflict" for item_id in (pair.first, pair.second)}
    by_root: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        if item.id in forest.parent:
            by_root[forest.find(item.id)].append(item)
    result = DedupResult(config, len(pool), candidates, pairs, [])
    for number, members in enumerate(sorted(by_root.values(), key=lambda m: pool_order_key(m[0])), start=1):
        ranked = sorted(members, key=lambda item: (REVIEW_RANK.get(item.status, len(REVIEW_RANK)), pool_order_key(item)))
        kept = ranked[0]
        result.clusters.append([item.id for item in ranked])
        copy_of = _conflict_copies(ranked, in_conflict, text_of)
        carrying = in_conflict | {survivor.id for survivor in copy_of.values()}  # stay, in review
        for item in ranked[1:]:
            if item.id in copy_of:
                survivor = copy_of[item.id]
                result.excluded[item.id] = (survivor.id, number, 1.0)
                result.exact_excluded[item.id] = _scope_key(item, config.scope) != _scope_key(survivor, config.scope)
            elif item.id not in carrying:
                link = best[item.id]
                result.excluded[item.id] = (kept.id, number, link.ratio)
                if link.exact:
                    result.exact_excluded[item.id] = link.cross_scope
    return result


def _conflict_copies(ranked: list[Item], in_conflict: set[str], text_of: dict[str, str]) -> dict[str, Item]:
    """Members in an answer conflict that repeat a higher-ranked member (equal canonical text, same
    key, in a conflict or not) -> that member, which carries their conflicts into review."""
    first_copy: dict[tuple[str, tuple[str, ...]], Item] = {}
    copy_of = {}
    for item in ranked:
        survivor = first_copy.setdefault((text_of[item.id], canonical_answer(item)), item)
        if survivor is not item and item.id in in_conflict:
            copy_of[item.id] = survivor
    return copy_of


def _classify(first: Item, second: Item, ratio: float, config: DedupConfig, antonyms: AntonymLexicon,
              stem_ratio: float, exact: bool = False, cross_scope: bool = False) -> Pair:
    swaps = () if exact else tuple(antonyms.swaps(canonical_stem_text(first.stem), canonical_stem_text(second.stem)))
    same_answer = canonical_answer(first) == canonical_answer(second) if first.answer and second.answer else None
    needs_same_answer = config.require_same_answer or (
        config.same_answer_below is not None and ratio < config.same_answer_below)
    if stem_ratio < config.stem_gate:
        verdict: Verdict = "stem_gate"
    elif swaps:
        verdict = "inverted"
    elif same_answer is False and ratio >= config.conflict_ratio:
        verdict = "answer_conflict"
    elif needs_same_answer and same_answer is False:
        verdict = "answer_differs"
    else:
        verdict = "merged"
    return Pair(first.id, second.id, ratio, stem_ratio, verdict, swaps, same_answer, exact, cross_scope)
