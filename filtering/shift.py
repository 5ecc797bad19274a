"""Distribution shift between the raw pool, the full set and the hard subset.

Embeddings → PCA(50, scikit-learn) → UMAP(3) (`umap-learn` extra; PCA(3) with a note without it) → KL
divergence between the sets. The estimator is *binned*: the 3-D projection is cut into
quantile bins of the pool (up to 8 per axis, fewer for small pools so that a cell holds
about 10 pool items on average), counts get Jeffreys smoothing (+0.5 per cell), and
KL(S ‖ pool) = Σ p_S log(p_S / p_pool). It is exactly 0 for a set against itself and grows
with a planted shift; unlike k-NN estimators it is not thrown off by the subsets sharing
points with the pool. Composition changes (by each of the report's facets: subject, part, modality, Korea flag) are reported too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from curation.core.facets import IN_PLAY, Facet, report_facets
from curation.core.item import Item
from evaluation.chart_fonts import hangul_charts

MAX_BINS = 8
SMOOTHING = 0.5


def bins_per_axis(n: int, dims: int = 3) -> int:
    return max(2, min(MAX_BINS, int((n / 10) ** (1 / dims))))


def pca(matrix: np.ndarray, components: int) -> np.ndarray:
    """scikit-learn's PCA (exact SVD), capped at what the matrix allows."""
    from sklearn.decomposition import PCA

    components = min(components, *matrix.shape)
    return PCA(n_components=components, svd_solver="full").fit_transform(matrix)


def project(embeddings: np.ndarray, seed: int = 0) -> tuple[np.ndarray, str]:
    """(n × 3 projection, method note)."""
    reduced = pca(embeddings, 50)
    try:
        import umap
    except ImportError:
        return reduced[:, :3], "PCA(50) → PCA(3) (umap-learn not installed: pip install 'benchsmith[umap]')"
    neighbours = max(2, min(15, len(reduced) - 1))
    reducer = umap.UMAP(n_components=3, n_neighbors=neighbours, random_state=seed, init="random")
    return reducer.fit_transform(reduced), f"PCA(50) → UMAP(3, n_neighbors={neighbours}, seed {seed})"


def _cells(points: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    index = np.zeros(len(points), dtype=np.int64)
    for axis, axis_edges in enumerate(edges):
        bins = len(axis_edges)
        index = index * bins + np.clip(np.searchsorted(axis_edges, points[:, axis], side="right") - 1, 0, bins - 1)
    return index


def binned_kl(subset: np.ndarray, reference: np.ndarray, bins_from: np.ndarray | None = None) -> float:
    """KL(subset ‖ reference) over quantile bins of `bins_from` (default: the reference)."""
    base = reference if bins_from is None else bins_from
    bins = bins_per_axis(len(base), base.shape[1])
    edges = [np.quantile(base[:, axis], np.linspace(0, 1, bins + 1)[:-1]) for axis in range(base.shape[1])]
    cells = bins ** base.shape[1]
    p = np.bincount(_cells(subset, edges), minlength=cells) + SMOOTHING
    q = np.bincount(_cells(reference, edges), minlength=cells) + SMOOTHING
    p, q = p / p.sum(), q / q.sum()
    return float(np.sum(p * np.log(p / q)))


@dataclass
class ShiftReport:
    embedder: str
    projection: str
    sizes: dict[str, int]
    kl: dict[str, float]
    composition: dict[str, dict[str, dict[str, float]]]
    estimator: str = (f"binned: quantile cells of the pool's 3-D projection (bins per axis = clamp((n/10)^(1/3), 2, "
                      f"{MAX_BINS})), Jeffreys smoothing {SMOOTHING}")
    plots: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def composition(labels_by_set: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    shares = {}
    for name, labels in labels_by_set.items():
        counts = Counter(labels)
        total = sum(counts.values()) or 1
        shares[name] = {label: round(count / total, 4) for label, count in sorted(counts.items())}
    return shares


@hangul_charts()
def plot_projection(points: np.ndarray, membership: dict[str, np.ndarray], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 5), dpi=110)
    styles = {"pool": ("#c8c8c8", 8), "full": ("#4c78a8", 10), "hard": ("#e45756", 16)}
    for name, mask in membership.items():
        color, size = styles.get(name, ("#54a24b", 10))
        axes.scatter(points[mask, 0], points[mask, 1], s=size, c=color, label=f"{name} ({int(mask.sum())})", alpha=0.8)
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


@hangul_charts()
def plot_composition(shares: dict[str, dict[str, float]], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({label for values in shares.values() for label in values})
    names = list(shares)
    figure, axes = plt.subplots(figsize=(6, 4), dpi=110)
    bottom = np.zeros(len(names))
    for label in labels:
        values = np.array([shares[name].get(label, 0.0) for name in names])
        axes.bar(names, values, bottom=bottom, label=label)
        bottom += values
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def composition_label(facet: Facet, item: Item) -> str:
    """The item's share label by one of the report's facets: its part or subject (the catalogue's one
    rule), multimodal / text_only, or the Korea flag as decided (True, False, None = undecided)."""
    value = facet.read(item)
    if facet.report == "split":
        return facet.subsets(value)[0]
    return "(none)" if value is None or value == "" else str(value)


def item_text(item: Any) -> str:
    return item.stem + "\n" + "\n".join(option.text for option in item.options)


def analyze_shift(items: list[Any], hard_ids: set[str] | None, embedder_name: str, embed: Any,
                  out_dir: Path, seed: int = 0) -> ShiftReport:
    """Items are the whole store (the pool); `full` is the active items; `hard` the survivors."""
    out_dir.mkdir(parents=True, exist_ok=True)
    embeddings = embed([item_text(item) for item in items])
    points, projection_note = project(embeddings, seed)
    statuses = np.array([item.status for item in items])
    membership = {"pool": np.ones(len(items), dtype=bool),
                  "full": np.isin(statuses, IN_PLAY)}
    notes = []
    if hard_ids is not None:
        membership["hard"] = np.array([item.id in hard_ids for item in items])
    else:
        notes.append("no filtering record: the hard subset is left out")
    kl = {}
    for name, mask in membership.items():
        if name != "pool" and mask.any():
            kl[f"{name}‖pool"] = round(binned_kl(points[mask], points, points), 4)
    if "hard" in membership and membership["hard"].any() and membership["full"].any():
        kl["hard‖full"] = round(binned_kl(points[membership["hard"]], points[membership["full"]], points), 4)

    def labels(mask: np.ndarray, key) -> list[str]:  # noqa: ANN001
        return [key(item) for item, keep in zip(items, mask, strict=True) if keep]

    compositions = {facet.name: composition({n: labels(m, lambda i, f=facet: composition_label(f, i))
                                             for n, m in membership.items()}) for facet in report_facets()}
    report = ShiftReport(embedder_name, projection_note, {n: int(m.sum()) for n, m in membership.items()}, kl,
                         compositions, notes=notes)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        report.notes.append("plots skipped: matplotlib is not installed: pip install 'benchsmith[report]'")
        return report
    report.plots = [str(plot_projection(points, membership, out_dir / "projection.png",
                                        f"{embedder_name}: {projection_note}"))]
    report.plots += [str(plot_composition(shares, out_dir / f"composition-{name}.png", f"composition by {name}"))
                     for name, shares in compositions.items()]
    return report
