"""The release card as the Hub reads it: sizes by the Hub's convention (num_bytes and
dataset_size in memory as `datasets` measures them, download_size the parquet files) and the
licence of each source, on a release mixing national-exam items with KMMLU rows."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
import yaml

from curation.core.store import ItemQuery
from curation.core.workspace import init_workspace
from curation.importers import import_file
from export.build import build_release
from export.release_config import ReleaseConfig
from tests.release_support import accept_all, add_sample_exam

KMMLU_ROWS = 9
AGENCY_TERMS = "Exam content remains the copyright of the issuing agency; use for research and evaluation."


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A workspace holding the sample exam (images, no licence of its own) and KMMLU rows."""
    root = tmp_path_factory.mktemp("mixed")
    workspace = init_workspace(root / "ws")
    add_sample_exam(workspace, root / "exam")
    kmmlu = root / "kmmlu_criminal_law.json"
    kmmlu.write_text(json.dumps([{"question": f"형법 문제 {n}: 옳은 것은?", "A": "가", "B": "나", "C": "다", "D": "라",
                                  "answer": n % 4 + 1, "Category": "Criminal-Law"} for n in range(KMMLU_ROWS)],
                                ensure_ascii=False), encoding="utf-8")
    assert import_file(kmmlu, workspace.store, fmt="kmmlu").created == KMMLU_ROWS
    accept_all(workspace)
    return workspace


@pytest.fixture(scope="module")
def release(mixed):
    # small shards and row groups, so the sizes add up over several files and batches
    return build_release(mixed, "1.0.0", ReleaseConfig(name="mixed", shard_rows=10, row_group_rows=4)).path


def _card(path):
    return yaml.safe_load((path / "README.md").read_text(encoding="utf-8").split("---")[1])


def test_card_sizes_are_what_datasets_measures(release, tmp_path):
    import datasets

    info = {entry["config_name"]: entry for entry in _card(release)["dataset_info"]}
    assert len(info) > 1
    for config, entry in info.items():
        files = sorted(str(path) for path in (release / "data" / config).glob("*.parquet"))
        loaded = datasets.load_dataset("parquet", data_files={"test": files}, cache_dir=str(tmp_path / config))["test"]
        assert entry["splits"][0]["num_bytes"] == loaded.info.splits["test"].num_bytes, config
        assert entry["dataset_size"] == loaded.info.dataset_size, config
        assert entry["download_size"] == sum(os.path.getsize(path) for path in files), config
    assert len(list((release / "data" / "full").glob("*.parquet"))) > 1  # several shards were added up


def _sources(workspace) -> Counter:
    """Rows per source: the accepted items with a key (every format has its release columns)."""
    return Counter(stored.item.source.exam for stored in workspace.store.iter_items(ItemQuery(status=["accepted"]))
                   if stored.item.answer is not None)


def test_each_source_has_its_licence_in_the_card_and_license_file(mixed, release):
    sources = _sources(mixed)
    assert sources["KMMLU"] == KMMLU_ROWS and len(sources) == 2
    expected = {f"| {exam} | {'cc-by-nd-4.0' if exam == 'KMMLU' else AGENCY_TERMS} | {count} |"
                for exam, count in sources.items()}
    card = (release / "README.md").read_text(encoding="utf-8")
    licence_file = (release / "LICENSE.md").read_text(encoding="utf-8")
    for line in expected:
        assert line in card.splitlines()
        assert line in licence_file.splitlines()
    front = _card(release)
    assert (front["license"], front["license_link"]) == ("other", "LICENSE.md")
    assert json.loads((release / "croissant.json").read_text(encoding="utf-8"))["license"] == "other"


def test_a_config_mapping_gives_every_source_one_licence(mixed, tmp_path):
    exam = next(name for name in _sources(mixed) if name != "KMMLU")
    config = ReleaseConfig(name="mixed", source_licenses={exam: "cc-by-4.0", "KMMLU": "cc-by-4.0"})
    path = build_release(mixed, "1.0.1", config, out=tmp_path / "mapped").path
    front = _card(path)
    assert front["license"] == "cc-by-4.0" and "license_link" not in front  # one Hub licence: no `other`
    assert not (path / "LICENSE.md").exists()
    assert f"| KMMLU | cc-by-4.0 | {KMMLU_ROWS} |" in (path / "README.md").read_text(encoding="utf-8")
    recorded = json.loads((path / "release.json").read_text(encoding="utf-8"))["config"]
    assert recorded["source_licenses"] == {exam: "cc-by-4.0", "KMMLU": "cc-by-4.0"}
