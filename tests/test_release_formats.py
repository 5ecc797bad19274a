"""A release as other tools load it: `datasets` 3.6 (what lm_eval 0.4.9 pins) in a second
virtual environment, Croissant records through mlcroissant, and VLMEvalKit's TSV rules."""

from __future__ import annotations

import json
import subprocess

import pytest

from export.vlmevalkit import PICTURE
from tests.vlmevalkit_rules import load_mcq_tsv

LEGACY_READ = """
import json, sys, datasets
out = {}
for config in sys.argv[2].split(","):
    rows = datasets.load_dataset(sys.argv[1], config, cache_dir=sys.argv[3])["test"]
    out[config] = {"version": datasets.__version__, "ids": rows["id"],
                   "images": [[image.size for image in row["question_images"]]
                              + [o["image"].size for o in row["options"] if o["image"] is not None] for row in rows],
                   "answers": rows["answers"]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def modern(harness_release, tmp_path_factory):
    import datasets

    _, path, counts = harness_release
    cache = tmp_path_factory.mktemp("hf-cache")
    return {config: datasets.load_dataset(str(path), config, cache_dir=str(cache))["test"] for config in counts}


def _image_sizes(row) -> list[tuple[int, int]]:
    return ([image.size for image in row["question_images"]]
            + [o["image"].size for o in row["options"] if o["image"] is not None])


def test_datasets_3_reads_every_config_like_datasets_5(harness_release, modern, legacy_datasets_python, tmp_path):
    _, path, counts = harness_release
    done = subprocess.run([str(legacy_datasets_python), "-c", LEGACY_READ, str(path), ",".join(counts),
                           str(tmp_path / "cache")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    legacy = json.loads(done.stdout)
    for config, rows in modern.items():
        assert legacy[config]["version"].startswith("3.6")
        assert legacy[config]["ids"] == rows["id"]
        assert legacy[config]["answers"] == rows["answers"]
        assert [[tuple(size) for size in sizes] for sizes in legacy[config]["images"]] == [_image_sizes(r) for r in rows]
    assert any(legacy["full"]["images"])


def test_croissant_yields_every_config_with_options_and_decoded_images(harness_release, modern):
    mlc = pytest.importorskip("mlcroissant")
    _, path, counts = harness_release
    dataset = mlc.Dataset(jsonld=str(path / "croissant.json"))
    for config, rows in modern.items():
        records = list(dataset.records(record_set=config))
        assert len(records) == len(rows) == counts[config]
        by_id = {record[f"{config}/id"].decode(): record for record in records}
        assert set(by_id) == set(rows["id"])
        for row in rows:
            record = by_id[row["id"]]
            options = record[f"{config}/options"]
            assert [o[f"{config}/options/text"].decode() for o in options] == [o["text"] for o in row["options"]]
            sizes = [image.size for image in record[f"{config}/question_images"]]
            sizes += [o[f"{config}/options/image"].size for o in options if o[f"{config}/options/image"] is not None]
            assert sizes == _image_sizes(row)
    assert any(_image_sizes(row) for row in modern["full"])


def _numbered_cells(row) -> tuple[str, list[str]]:
    """The question (without its first line when there are images) and option cells VLMEvalKit should show
    for a row: without images, the row's own; with images (which VLMEvalKit sends before the text, question
    images first), each image's place marked `[그림 k]` in that order: question images after the question,
    option images in their option's cell."""
    if not _image_sizes(row):
        return row["question"], [o["text"] or PICTURE for o in row["options"]]
    first = len(row["question_images"])
    question = "\n".join([row["question"], *(f"[그림 {k}]" for k in range(1, first + 1))])
    numbers = iter(range(first + 1, len(_image_sizes(row)) + 1))
    options = [" ".join(filter(None, [o["text"], f"[그림 {next(numbers)}]"])) if o["image"] is not None
               else o["text"] or PICTURE for o in row["options"]]
    return question, options


def test_vlmevalkit_tables_keep_every_row_and_every_image(harness_release, modern):
    _, path, counts = harness_release
    folder = path / "harness" / "vlmevalkit"
    for config, rows in modern.items():
        text_file, image_file = folder / f"{config}.tsv", folder / f"{config}_image.tsv"
        loaded = []
        if text_file.exists():
            assert "image" not in text_file.read_text(encoding="utf-8").splitlines()[0].split("\t")
            loaded += load_mcq_tsv(text_file)
        if image_file.exists():
            loaded += load_mcq_tsv(image_file)
        assert sorted(r["id"] for r in loaded) == sorted(rows["id"])  # no row dropped
        by_id = {r["id"]: r for r in loaded}
        for row in rows:
            got = by_id[row["id"]]
            assert [image.size for image in got["images"]] == _image_sizes(row)
            question, options = _numbered_cells(row)
            if got["images"]:  # first a note saying how many images come before the text
                note, _, got["question"] = got["question"].partition("\n")
                assert note.startswith("※") and f"그림 {len(got['images'])}장" in note, note
            assert got["question"] == question
            assert list(got["options"].values()) == options
            assert got["answer"] == ",".join("ABCDEFGHIJ"[n - 1] for n in row["answers"])
    assert any(load_mcq_tsv(folder / "full_image.tsv"))
