"""The item-facet catalogue: an item whose reviewed taxonomy and paper source disagree on part and
subject is counted under the taxonomy's by every reader (store index, `items stats`, the report,
the release, `analyze shift`, the annotator's subject filter), and what each consumer declares
equals what the catalogue derives."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from curation.core.facets import FACETS
from curation.core.store import ItemQuery, items_table
from curation.core.workspace import open_workspace
from tests.conftest import run_cli

# id → (source part, source subject, taxonomy part, taxonomy subject); options of different lengths
# so `baseline:longest` answers each item.
LABELS = {
    "f-1": ("1과목", "기상학개론", None, None),
    "f-2": ("1과목", "기상학개론", None, None),
    "f-3": ("1과목", "기상학개론", None, None),
    "f-4": ("1과목", "기상학개론", "2과목", "일기분석"),  # a reviewer moved it: taxonomy and source disagree
    "f-5": ("2과목", "일기분석", None, None),
    "f-6": (None, None, "3과목", "기후학"),
}
# Written out by hand from LABELS (the taxonomy where it says something, else the source):
EXPECTED_PART = {"f-1": "1과목", "f-2": "1과목", "f-3": "1과목", "f-4": "2과목", "f-5": "2과목", "f-6": "3과목"}
EXPECTED_SUBJECT = {"f-1": "기상학개론", "f-2": "기상학개론", "f-3": "기상학개론", "f-4": "일기분석",
                    "f-5": "일기분석", "f-6": "기후학"}


def _record(item_id: str, labels: tuple[str | None, ...], number: int) -> dict:
    source_part, source_subject, taxonomy_part, taxonomy_subject = labels
    return {"id": item_id, "source": {"exam": "기상기사", "part": source_part, "subject": source_subject, "number": number},
            "stem": f"{item_id}: 다음 중 대기에 관한 설명으로 옳은 것은?",
            "options": [{"text": "가" * (1 + (number + k) % 4)} for k in range(4)], "answer": 1,
            "taxonomy": {"part": taxonomy_part, "subject": taxonomy_subject}}


def _cli(ws: Path, *args: str) -> str:
    done = run_cli(*args, "-w", str(ws))
    assert done.returncode == 0, f"{args}: {done.stderr}\n{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    root = tmp_path_factory.mktemp("facets")
    ws = root / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(_record(i, labels, n), ensure_ascii=False) + "\n"
                            for n, (i, labels) in enumerate(LABELS.items(), start=1)), encoding="utf-8")
    _cli(ws, "items", "import", str(path))
    return ws, root


def _shares(labels: dict[str, str]) -> dict[str, float]:
    counts = Counter(labels.values())
    return {label: round(n / len(labels), 4) for label, n in sorted(counts.items())}


def test_the_store_index_and_items_stats_count_the_taxonomy(pool):
    ws, _ = pool
    store = open_workspace(ws).store
    columns = store.columns(["part", "subject"])
    assert dict(zip(columns["id"], columns["part"], strict=True)) == EXPECTED_PART
    assert dict(zip(columns["id"], columns["subject"], strict=True)) == EXPECTED_SUBJECT
    assert store.ids(ItemQuery(part="2과목")) == ["f-4", "f-5"]
    assert store.ids(ItemQuery(subject="기상학개론")) == ["f-1", "f-2", "f-3"]
    stats = json.loads(_cli(ws, "items", "stats", "--json"))
    assert stats["by_part"] == {"1과목": 3, "2과목": 2, "3과목": 1}
    assert stats["by_subject"] == {"기상학개론": 3, "기후학": 1, "일기분석": 2}


def test_the_report_counts_the_taxonomy(pool):
    ws, root = pool
    _cli(ws, "run", "-m", "baseline:longest", "--no-progress")
    run = next(p.name for p in (ws / "runs").iterdir() if (p / "manifest.json").is_file())
    _cli(ws, "report", run, "-o", str(root / "report"), "--no-charts")
    with (root / "report" / "accuracy.csv").open(encoding="utf-8") as handle:
        n = {row["subset"]: int(row["n"]) for row in csv.DictReader(handle)}
    expected = {f"part:{label}": count for label, count in Counter(EXPECTED_PART.values()).items()}
    expected |= {f"subject:{label}": count for label, count in Counter(EXPECTED_SUBJECT.values()).items()}
    assert {name: count for name, count in n.items() if name.startswith(("part:", "subject:"))} == expected


def test_the_release_carries_the_taxonomy(pool):
    ws, root = pool
    (root / "release.yaml").write_text("statuses: [extracted, in_review, accepted]\nconfigs: [full]\n")
    _cli(ws, "release", "build", "--version", "1.0.0", "--config", str(root / "release.yaml"))
    shards = sorted((ws / "releases" / "v1.0.0" / "data" / "full").glob("*.parquet"))
    rows = [row for path in shards for row in pq.read_table(path, columns=["id", "part", "subject"]).to_pylist()]
    assert {row["id"]: row["part"] for row in rows} == EXPECTED_PART
    assert {row["id"]: row["subject"] for row in rows} == EXPECTED_SUBJECT


def test_analyze_shift_counts_the_taxonomy(pool):
    ws, _ = pool
    report = json.loads(_cli(ws, "analyze", "shift", "--embedder", "ngram", "--json"))
    assert report["composition"]["part"]["pool"] == _shares(EXPECTED_PART)
    assert report["composition"]["subject"]["pool"] == _shares(EXPECTED_SUBJECT)


def test_the_annotators_subject_filter_counts_the_taxonomy(pool):
    from sqlalchemy import select

    from annotator.review.queues import Filters, where

    ws, _ = pool
    store = open_workspace(ws).store
    with store.engine.connect() as conn:
        chosen = conn.execute(select(items_table.c.id).where(where("item", Filters(subject="일기분석")))
                              .order_by(items_table.c.id)).scalars().all()
    assert chosen == ["f-4", "f-5"]


# -- what each consumer declares is what the catalogue derives -----------------------------------
def _with(flag: str) -> list[str]:
    return [f.name for f in FACETS if getattr(f, flag)]


def test_the_store_columns_are_the_catalogues_store_facets():
    own = ["id", "rev", "content_hash", "data", "updated_at", "updated_by"]
    assert [c.name for c in items_table.columns if c.name not in own] == _with("store_column")
    assert _with("store_column") == ["status", "exam", "session", "subject", "part", "number", "korea_specific",
                                     "multimodal", "korea_candidate", "needs_fix", "has_rationale", "answer_format",
                                     "points"]


def test_item_query_fields_are_ids_and_the_queryable_facets():
    assert [f.name for f in dataclasses.fields(ItemQuery)] == ["ids", *_with("query")]
    assert _with("query") == ["status", "exam", "subject", "part", "korea_specific", "multimodal", "answer_format"]


def test_release_features_and_rows_are_the_catalogues_release_facets(tmp_path):
    from curation.core.blobs import BlobStore
    from curation.core.item import parse_item
    from evaluation.release_records import ReleaseRow
    from export.features import RELEASE_COLUMNS, hf_features
    from export.rows import item_row

    release = _with("release")
    assert release == ["exam", "session", "subject", "part", "number", "korea_specific", "multimodal", "visual_type",
                       "question_format"]
    assert [name for name in RELEASE_COLUMNS if name in release] == release
    assert set(release) <= set(hf_features()) and set(release) <= set(ReleaseRow.model_fields)
    row = item_row(parse_item(_record("f-4", LABELS["f-4"], 4)), BlobStore(tmp_path / "blobs"))
    assert list(row) == list(RELEASE_COLUMNS)
    assert {name: row[name] for name in release} == {
        "exam": "기상기사", "session": None, "subject": "일기분석", "part": "2과목", "number": 4, "korea_specific": None,
        "multimodal": False, "visual_type": None, "question_format": None}


def test_report_subsets_are_the_catalogues_report_facets():
    from curation.core.item import parse_item
    from evaluation.item_facets import ItemFacets

    record = _record("f-4", LABELS["f-4"], 4) | {"flags": {"korea_specific": True}}
    facets = ItemFacets.from_items([parse_item(record)], "implicit")
    assert set(facets.values) == set(_with("report")) == {"subject", "part", "korea_specific", "multimodal",
                                                          "answer_format"}
    assert facets.subsets("f-4", {"hard": {"f-4"}}) == ["overall", "korea_specific", "text_only", "hard", "part:2과목",
                                                         "subject:일기분석"]  # one answer format: no format:… subset


def test_answer_format_subsets_only_in_a_dataset_of_several_formats():
    from curation.core.item import parse_item
    from evaluation.item_facets import ItemFacets

    choice = _record("f-4", LABELS["f-4"], 4)
    numeric = _record("f-5", LABELS["f-4"], 5) | {"options": [], "answer": {"format": "numeric", "value": "7"}}
    facets = ItemFacets.from_items([parse_item(choice), parse_item(numeric)], "implicit")
    assert [name for name in facets.subsets("f-5") if name.startswith("format:")] == ["format:numeric"]
    masks = facets.masks(["f-4", "f-5", "f-9"])
    assert masks["format:choice"].tolist() == [True, False, False]
    assert masks["format:numeric"].tolist() == [False, True, False]
    alone = ItemFacets.from_items([parse_item(choice)], "implicit")
    assert not [name for name in alone.masks(["f-4"]) if name.startswith("format:")]


def test_release_configs_of_facets_are_release_config_names():
    from export.build import CONFIG_FILTERS
    from export.release_config import CONFIG_NAMES

    assert _with("release_config") == ["korea_specific", "multimodal"]
    assert set(_with("release_config")) <= set(CONFIG_FILTERS) & set(CONFIG_NAMES)


def test_runs_read_the_items_in_play_and_set_status_takes_every_status_and_no_other(tmp_path):
    """One item per status, each set through `items set-status`: what runs, filters and releases read
    without a status asked (`in_play`) is the extracted, in-review and accepted ones; a status asked
    for is read as asked; a status that is none of the five is one clear error naming them."""
    from curation.core.item import parse_item
    from curation.core.query import in_play
    from curation.core.workspace import init_workspace
    from tests.helpers import make_record

    ws = init_workspace(tmp_path / "ws")
    wanted = {"extracted": "s-1", "in_review": "s-2", "accepted": "s-3", "rejected": "s-4", "excluded": "s-5"}
    ws.store.save_items([parse_item(make_record(item_id)) for item_id in wanted.values()], author="t", stage="import")
    for status, item_id in wanted.items():
        done = run_cli("items", "set-status", status, "--where", f"ids={item_id}", "--reason", "test",
                       "-w", str(ws.root), "--json")
        assert done.returncode == 0, done.stderr
    assert {stored.item.id: stored.item.status for stored in ws.store.iter_items()} == {v: k for k, v in wanted.items()}
    assert ws.store.ids(in_play(None)) == ["s-1", "s-2", "s-3"]
    assert ws.store.ids(in_play(ItemQuery(status=["rejected"]))) == ["s-4"]
    refused = run_cli("items", "set-status", "finished", "--where", "ids=s-1", "--reason", "test", "-w", str(ws.root))
    assert refused.returncode != 0 and all(status in refused.stderr for status in wanted), refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
