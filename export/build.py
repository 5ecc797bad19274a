"""Building a release: a pure function of (store snapshot, release config, previous release).

The folder is written next to its destination and moved into place only when complete, so
a failed build never leaves half a release; the same inputs give byte-identical files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from curation.core.blobs import BlobStore
from curation.core.errors import BenchsmithError
from curation.core.facets import Facet, release_config_facets
from curation.core.item import Item
from curation.core.store import ItemQuery
from curation.core.workspace import Workspace
from curation.execution.background import Background
from curation.steps.dedup_report import latest_dedup_report
from evaluation.decoding import RELEASE_DECODING
from evaluation.filter_records import FilterRecord, latest_filter_record
from evaluation.release_records import (
    ReleaseBuilder,
    ReleaseConfigFiles,
    ReleaseManifest,
    StoreSnapshot,
    TinySubset,
)
from export import harness, hret
from export.changelog import MANIFEST, Changelog, build_changelog, find_previous
from export.croissant import croissant
from export.features import release_features
from export.harness_scoring import write_scoring
from export.integrity import content_hash, write_checksums
from export.licences import SourceLicence, licence_file, licence_table, release_licence, source_licences
from export.parquet import WRITER_SETTINGS, arrow_nbytes, arrow_rows, portable_yaml_list, write_shards
from export.release_bank import add_release_bank
from export.release_config import ReleaseConfig, check_version
from export.rows import RATIONALE_RELEASED, item_row, row_hash
from export.tiny import ESTIMATION_FILE, TinyPlan, plan_tiny, write_estimation
from export.tiny import card_text as tiny_card_text
from export.vlmevalkit import in_open_table, write_vlmevalkit
from export.vlmevalkit import write_script as write_vlmevalkit_script
from scoring.portable import FORMATS, checker_versions


def _facet_is_true(facet: Facet) -> Callable[[Item], bool]:
    return lambda item: facet.read(item) is True


CONFIG_FILTERS: dict[str, Callable[[Item], bool]] = {
    "full": lambda item: True,
    **{facet.name: _facet_is_true(facet) for facet in release_config_facets()},  # korea_specific, multimodal
    "reasoning": lambda item: item.rationale is not None and item.rationale.status in RATIONALE_RELEASED,
    "explicit": lambda item: CONFIG_FILTERS["korea_specific"](item) and bool(item.explicit_variant),
}


@dataclass
class ReleaseResult:
    path: Path
    version: str
    counts: dict[str, int]
    content_hash: str
    changelog: Changelog
    notes: list[str]


LICENSE_FILE = "LICENSE.md"


def license_fields(config: ReleaseConfig, licence: str) -> dict[str, str]:
    """`license_name` and `license_link`, which the Hub's card check wants when the licence is `other`
    (by default LICENSE.md in the release: which licence applies to which rows)."""
    if licence != "other":
        return {}
    name = config.license_name or re.sub(r"[^a-z0-9.-]+", "-", f"{config.name}-terms".lower()).strip("-")
    return {"license_name": name, "license_link": config.license_link or LICENSE_FILE}


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def _filtering(workspace: Workspace) -> FilterRecord | None:
    """The newest filtering record (a `hard` one before an adversarial one), or None."""
    found = latest_filter_record(workspace.root)
    return found[1] if found else None


def _table(rows: list[tuple[Any, ...]]) -> str:
    return "\n".join("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows) or "| (none) | 0 |"


@dataclass
class _Selection:
    """What a release holds: the released items, each config's rows and what the card says of them."""

    items: list[Item]
    rows_by_config: dict[str, list[dict[str, Any]]]
    shared: dict[str, dict[str, Any]]  # item → its row, the same object in every config but `explicit`
    record: FilterRecord | None
    tiny: TinyPlan | None
    notes: list[str]
    hashes: dict[str, str]  # every released item's content hash (implicit variant), from the store


def build_release(workspace: Workspace, version: str, config: ReleaseConfig, out: Path | None = None) -> ReleaseResult:
    version = check_version(version)
    out = Path(out) if out else workspace.releases_dir / f"v{version}"
    if out.exists():
        raise BenchsmithError(f"{out} already exists: releases are immutable, choose a new version or --out")
    selection = _select(workspace, config)
    rows_by_config = selection.rows_by_config
    tmp = out.with_name(f".{out.name}.building-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    harness_job: Background | None = None
    try:
        # The harness folder is written by a thread beside this one while this thread writes the
        # shards, hashes and card: both read the same rows, which nobody changes now.
        items_by_id = {item.id: item for item in selection.items}
        harness_job = Background(lambda: _write_harness(tmp, config, version, rows_by_config, workspace.blobs,
                                                        items_by_id), name="benchsmith-release-harness")
        written = _write_data_and_card(tmp, workspace, version, config, selection)
        add_release_bank(workspace, tmp, {row["id"]: selection.hashes[row["id"]] for row in rows_by_config.get("full", [])},
                         selection.notes)
        harness_job.wait()
        _write_croissant_and_checksums(tmp, config, version, written)
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, out)
    except BaseException:
        if harness_job is not None:
            harness_job.cancel()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    counts = {name: len(rows) for name, rows in rows_by_config.items()}
    return ReleaseResult(out, version, counts, written.manifest.content_hash, written.changelog, selection.notes)


def _select(workspace: Workspace, config: ReleaseConfig) -> _Selection:
    """The released items, the configs they fall in (hard and tiny from the workspace's
    filtering and estimation) and each config's rows; a config with no rows is left out, said so."""
    store = workspace.store
    items = [s.item for s in store.iter_items(ItemQuery(status=list(config.statuses)))]
    notes: list[str] = []
    if not items:
        raise BenchsmithError(f"no items with status {', '.join(config.statuses)} to release")
    released = store.hashes(ItemQuery(status=list(config.statuses)))
    record = _filtering(workspace)
    filters = dict(CONFIG_FILTERS)
    if record is not None:
        decided = record.hard_subset(released)
        hard = set(decided.ids)
        notes += decided.notes()
        filters["hard"] = lambda item: item.id in hard
    elif "hard" in config.configs:
        notes.append("hard: not built (no filtering result in the workspace yet)")
    tiny: TinyPlan | None = None
    if "tiny" in config.configs and config.tiny:
        tiny = plan_tiny(config.tiny, workspace, released)
        notes += tiny.notes
        tiny_items = tiny.items
        filters["tiny"] = lambda item: item.id in tiny_items
    rows_by_config: dict[str, list[dict[str, Any]]] = {}
    shared: dict[str, dict[str, Any]] = {}
    for name in (name for name in config.configs if name in filters):
        selected = sorted((i for i in items if filters[name](i)), key=lambda i: i.id)
        if name == "explicit":
            rows_by_config[name] = [item_row(i, workspace.blobs, explicit=True) for i in selected]
        else:
            rows_by_config[name] = [shared.get(i.id) or shared.setdefault(i.id, item_row(i, workspace.blobs))
                                    for i in selected]
    for empty in [config_name for config_name, rows in rows_by_config.items() if not rows]:
        notes.append(f"{empty}: not built (no items)")
        del rows_by_config[empty]
    return _Selection(items, rows_by_config, shared, record, tiny, notes, released)


@dataclass
class _Written:
    manifest: ReleaseManifest
    changelog: Changelog
    files: dict[str, list[str]]  # config → its shards
    features: Any
    licence: str


def _write_data_and_card(tmp: Path, workspace: Workspace, version: str, config: ReleaseConfig,
                         selection: _Selection) -> _Written:
    """The shards of every config, the manifest (row hashes, changelog, tiny's estimation), the
    licence file where one is needed and the card."""
    rows_by_config, tiny = selection.rows_by_config, selection.tiny
    features = release_features()
    files: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    arrow_sizes: dict[str, int] = {}  # in memory, as `datasets` measures it: the card's num_bytes
    for name, table in _config_tables(rows_by_config, selection.shared, features).items():
        paths = write_shards(table, tmp / "data" / name, shard_rows=config.shard_rows,
                             row_group_rows=config.row_group_rows)
        files[name] = [p.relative_to(tmp).as_posix() for p in paths]
        sizes[name] = sum(p.stat().st_size for p in paths)
        arrow_sizes[name] = arrow_nbytes(paths)
    hash_of = RowHashes()
    row_hashes = {row["id"]: hash_of(row) for row in rows_by_config.get("full", [])}
    full_hash = content_hash(row_hashes)
    previous = find_previous(workspace.releases_dir, config.name, version)
    changelog = build_changelog(workspace.store, previous, row_hashes)
    manifest = _manifest(config, version, rows_by_config, files, sizes, row_hashes, full_hash, workspace, previous,
                         hash_of)
    if tiny is not None and config.tiny and "tiny" in rows_by_config:
        write_estimation(tiny, tmp)
        manifest.tiny = TinySubset(subset_file=config.tiny, subset_sha256=tiny.sha256, estimation=ESTIMATION_FILE,
                                   covered_items=len(tiny.estimation.all_items))
    else:
        tiny = None
    (tmp / MANIFEST).write_text(manifest.json_text(), encoding="utf-8")
    items_by_id = {item.id: item for item in selection.items}
    licences = source_licences(config, items_by_id, rows_by_config)
    licence = release_licence(config, licences)
    if licence == "other" and license_fields(config, licence)["license_link"] == LICENSE_FILE:
        (tmp / LICENSE_FILE).write_text(licence_file(config.pretty_name, licences), encoding="utf-8")
    (tmp / "README.md").write_text(
        render_card(config, version, selection.items, rows_by_config, features, manifest, changelog, workspace,
                    selection.notes, selection.record, tiny, arrow_sizes=arrow_sizes, licences=licences),
        encoding="utf-8")
    return _Written(manifest, changelog, files, features, licence)


def _write_croissant_and_checksums(tmp: Path, config: ReleaseConfig, version: str, written: _Written) -> None:
    """Checksums of every file, the Croissant description that names them, then the checksums again
    with croissant.json (the files' own sums are not computed twice)."""
    manifest = written.manifest
    sums = write_checksums(tmp)
    crate = croissant(config.name, config.description, written.licence, version,
                      f"https://huggingface.co/datasets/{config.hub_repo}" if config.hub_repo else "",
                      written.files, written.features.to_dict(), sums,
                      cite_as=config.citation or f"{config.pretty_name} (version {version}), built with benchsmith",
                      date_published=(manifest.store.last_revision_at or "")[:10] or None)
    (tmp / "croissant.json").write_text(json.dumps(crate, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    write_checksums(tmp, known=sums)


def _config_tables(rows_by_config: dict[str, list[dict[str, Any]]], shared: dict[str, dict[str, Any]],
                   features) -> dict[str, Any]:  # noqa: ANN001
    """Each config's rows as an Arrow table: the shared rows are converted once and each config
    takes its own from them (a row in `full` and `hard` is converted once, not twice)."""
    ids = sorted(shared)
    position = {item_id: index for index, item_id in enumerate(ids)}
    every = arrow_rows([shared[item_id] for item_id in ids], features)
    return {name: arrow_rows(rows, features) if name == "explicit"
            else every.take([position[row["id"]] for row in rows])
            for name, rows in rows_by_config.items()}


class RowHashes:
    """`row_hash` of each row object, computed once however many configs hold it."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[dict[str, Any], str]] = {}  # id(row) → (row kept alive, its hash)

    def __call__(self, row: dict[str, Any]) -> str:
        found = self._seen.get(id(row))
        if found is None:
            found = self._seen[id(row)] = (row, row_hash(row))
        return found[1]


def _manifest(config: ReleaseConfig, version: str, rows_by_config: dict, files: dict, sizes: dict, row_hashes: dict,
              full_hash: str, workspace: Workspace, previous: ReleaseManifest | None,
              hash_of: RowHashes) -> ReleaseManifest:
    from importlib.metadata import version as installed_version

    import pyarrow

    from curation.version import BENCHSMITH_VERSION as __version__

    return ReleaseManifest(
        name=config.name,
        version=version,
        previous=previous.version if previous else None,
        configs={name: ReleaseConfigFiles(rows=len(rows), files=files[name], bytes=sizes[name],
                                          content_hash=content_hash({r["id"]: hash_of(r) for r in rows}))
                 for name, rows in rows_by_config.items()},
        content_hash=full_hash,
        row_hashes=row_hashes,
        store=StoreSnapshot(items=workspace.store.count(), revisions=workspace.store.revision_count(),
                            last_revision_at=workspace.store.last_revision_at()),
        builder=ReleaseBuilder(benchsmith=__version__, pyarrow=pyarrow.__version__, datasets=installed_version("datasets"),
                               writer=WRITER_SETTINGS, shard_rows=config.shard_rows, row_group_rows=config.row_group_rows),
        # `tiny` and `source_licenses` are recorded only when set: a release without them is byte for byte what it
        # was before those options
        config=config.model_dump(mode="json", exclude={name for name in ("tiny", "source_licenses")
                                                       if not getattr(config, name)}),
        decoding=RELEASE_DECODING,
    )


def _write_harness(root: Path, config: ReleaseConfig, version: str, rows_by_config: dict[str, list[dict]],
                   blobs: BlobStore, items: dict[str, Item]) -> None:
    folder = root / "harness"
    prompts = write_scoring(folder, rows_by_config, blobs, config.harness_prompt, items, keep=in_open_table)
    harness.write_lm_eval(folder / "lm_eval", config.name, list(rows_by_config), RELEASE_DECODING)
    harness.write_inspect(folder / "inspect")
    hret.write_hret(folder / "hret")
    for name, rows in rows_by_config.items():
        write_vlmevalkit(folder / "vlmevalkit", name, rows, prompts[name])
    write_vlmevalkit_script(folder / "vlmevalkit")
    harness.write_readme(folder, config.name, version, rows_by_config, RELEASE_DECODING)


def _template(config: ReleaseConfig) -> str:
    if config.template:
        return Path(config.template).read_text(encoding="utf-8")
    return resources.files("data_cards").joinpath("default.md").read_text(encoding="utf-8")


NO_KEY = "(no key)"


def format_counts(rows_by_config: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    """Answer format → config → rows, formats in the checkers' order (then rows without a key)."""
    counts: dict[str, dict[str, int]] = {}
    for config, rows in rows_by_config.items():
        for fmt, n in Counter(row["answer_format"] or NO_KEY for row in rows).items():
            counts.setdefault(fmt, {})[config] = n
    order = [*FORMATS, NO_KEY]
    return {fmt: counts[fmt] for fmt in sorted(counts, key=lambda name: order.index(name) if name in order else 99)}


def formats_table(rows_by_config: dict[str, list[dict[str, Any]]]) -> str:
    """The card's table: each answer format, its checker's version and its rows per config."""
    configs = list(rows_by_config)
    versions = checker_versions()
    header = ["| format | checker | " + " | ".join(configs) + " |", "|---|---|" + "---:|" * len(configs)]
    lines = [f"| {fmt} | {'`' + versions[fmt] + '`' if fmt in versions else '—'} | "
             + " | ".join(str(by_config.get(config, 0)) for config in configs) + " |"
             for fmt, by_config in format_counts(rows_by_config).items()]
    return "\n".join(header + lines)


def _filtering_text(record: FilterRecord | None, rows_by_config: dict) -> str:
    if record is None or "hard" not in rows_by_config:
        return "No adversarial filtering result yet: no `hard` config."
    models = "; ".join(f"{m['name']} ({m['prompt']['version']}, {m['variant']}, runs {', '.join(m['run_ids'])})"
                       for m in record.models)
    return (f"Filtering ({record.kind}, {record.created_at}, {record.attempts} attempt(s) per model"
            f"{', sequential' if record.sequential else ''}): models {models}. Of {len(record.pool)} items, "
            f"{len(record.removed)} were solved by some model, {len(record.survivors)} were missed by every model "
            f"(the `hard` config), and {len(record.undetermined)} had unparseable or error outcomes and were "
            "left out rather than counted as unsolved.")


def render_card(config: ReleaseConfig, version: str, items: list[Item], rows_by_config: dict,
                features, manifest: ReleaseManifest, changelog: Changelog, workspace: Workspace, notes: list[str],  # noqa: ANN001
                record=None, tiny: TinyPlan | None = None, *, arrow_sizes: dict[str, int],
                licences: list[SourceLicence]) -> str:  # noqa: ANN001
    full = rows_by_config.get("full", [])
    task_categories = ["multiple-choice", "question-answering"]
    if any(row["multimodal"] for row in full):
        task_categories.append("visual-question-answering")
    configs_yaml = [{"config_name": name, "data_files": [{"split": "test", "path": f"data/{name}/test-*.parquet"}],
                     **({"default": True} if name == config.default_config else {})}
                    for name in rows_by_config]
    info = []
    for name, rows in rows_by_config.items():
        # the Hub's convention: num_bytes and dataset_size in memory (Arrow), download_size the parquet files
        in_memory = arrow_sizes[name]
        info.append({"config_name": name, "features": portable_yaml_list(features),
                     "splits": [{"name": "test", "num_bytes": in_memory, "num_examples": len(rows)}],
                     "download_size": manifest.configs[name].bytes, "dataset_size": in_memory})
    licence = release_licence(config, licences)
    metadata = {"license": licence, **license_fields(config, licence), "language": config.language,
                "task_categories": task_categories,
                "size_categories": [_size_category(len(full))], "pretty_name": config.pretty_name,
                "tags": ["benchmark", "exam", "korean", "benchsmith"], "configs": configs_yaml, "dataset_info": info}
    stats = workspace.store.stats()
    parts = Counter((row["part"] or row["subject"] or "(none)") for row in full)
    modality = Counter("multimodal" if row["multimodal"] else "text-only" for row in full)
    dedup = latest_dedup_report(workspace.runs_dir)
    if dedup is None:
        dedup_text = "No near-duplicate removal has been run."
    else:
        summary, settings = dedup.summary, dedup.config
        dedup_text = (f"Near-duplicates: {summary.pool} items compared ({settings.method}, threshold "
                      f"{settings.threshold}, scope {settings.scope}); {summary.pairs_over_threshold} pairs at or above "
                      f"the threshold, {summary.excluded} items excluded in {summary.clusters} clusters (largest "
                      f"{summary.largest_cluster}); inverted-logic pairs sent to review: {summary.pairs_inverted or 0}.")
    rationale_status = Counter(i.rationale.status for i in items if i.rationale)
    annotation_text = ("Rationales by review status: " + ", ".join(f"{k} {v}" for k, v in sorted(rationale_status.items()))
                       + "." if rationale_status else "No rationales have been reviewed yet.")
    filtering_text = _filtering_text(record, rows_by_config)
    if notes:
        filtering_text += "\n\n" + "\n".join(f"- {note}" for note in notes)
    changelog_text = _changelog_text(changelog)
    values = {
        "pretty_name": config.pretty_name, "description": config.description, "version": version,
        "total_items": len(full), "languages": ", ".join(config.language), "canary": config.canary_guid(),
        "formats_table": formats_table(rows_by_config),
        "config_table": _table([(name, len(rows), sum(r["multimodal"] for r in rows),
                                 sum(bool(r["korea_specific"]) for r in rows)) for name, rows in rows_by_config.items()]),
        "part_table": _table(sorted(parts.items())), "modality_table": _table(sorted(modality.items())),
        "statuses_text": " or ".join(config.statuses) + " in the store when the release was built",
        "stage_table": _table(sorted(workspace.store.stage_counts().items())),
        "dedup_text": dedup_text, "filtering_text": filtering_text, "annotation_text": annotation_text,
        "previous_version": changelog.previous or "(first release)", "changelog_text": changelog_text,
        "source_license": config.source_license, "licence_table": licence_table(licences), "license": licence,
        "benchsmith_version": manifest.builder.benchsmith, "store_items": stats["items"],
        "store_revisions": stats["revisions"], "last_revision_at": manifest.store.last_revision_at,
        "shard_rows": config.shard_rows, "row_group_rows": config.row_group_rows,
        "writer_settings": ", ".join(f"{k}={v}" for k, v in WRITER_SETTINGS.items()),
        "pyarrow_version": manifest.builder.pyarrow, "content_hash": manifest.content_hash,
        "lm_eval_tasks": ", ".join(f"`{harness.task_name(config.name, c)}`" for c in rows_by_config), "harness_prompt": config.harness_prompt,
        "decoding_text": manifest.run_decoding().describe(),
        "tiny_text": tiny_card_text(tiny, len(rows_by_config.get("tiny", []))),
        "citation_text": f"\n## Citation\n\n```\n{config.citation}\n```\n" if config.citation else "",
    }
    body = string.Template(_template(config)).safe_substitute(values)
    front = yaml.safe_dump(metadata, allow_unicode=True, sort_keys=False)
    return f"---\n{front}---\n\n{body}"


def _changelog_text(changelog: Changelog, limit: int = 50) -> str:
    if changelog.previous is None:
        return f"First release: {len(changelog.added)} items."
    lines = [f"{len(changelog.added)} added, {len(changelog.removed)} removed, {len(changelog.changed)} changed."]
    lines += [f"- added `{item_id}`" for item_id in changelog.added[:limit]]
    lines += [f"- removed `{item_id}`: {why}" for item_id, why in changelog.removed[:limit]]
    lines += [f"- changed `{item_id}`: {why}" for item_id, why in changelog.changed[:limit]]
    return "\n".join(lines)
