"""A release as other tools load it: `datasets` 3.6 (what lm_eval 0.4.9 pins) in a second
virtual environment, Croissant records through mlcroissant, and VLMEvalKit's TSV rules; the key
columns of every answer format (choice, numeric, set, text) load the same in each."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from export.features import KEY_COLUMNS
from export.vlmevalkit import PICTURE, SCRIPT
from tests.release_support import expected_outcome, scripted_reply
from tests.vlmevalkit_rules import load_mcq_tsv

LEGACY_READ = """
import json, sys, datasets
out = {}
for config in sys.argv[2].split(","):
    rows = datasets.load_dataset(sys.argv[1], config, cache_dir=sys.argv[3])["test"]
    out[config] = {"version": datasets.__version__, "ids": rows["id"],
                   "images": [[image.size for image in row["question_images"]]
                              + [o["image"].size for o in row["options"] if o["image"] is not None] for row in rows],
                   "answers": rows["answers"], "keys": [rows[name] for name in ("answer_format", "key", "answer_text", "points")]}
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
        assert legacy[config]["keys"] == [list(rows[name]) for name in KEY_COLUMNS]  # the script's list is KEY_COLUMNS
        assert [[tuple(size) for size in sizes] for sizes in legacy[config]["images"]] == [_image_sizes(r) for r in rows]
    assert any(legacy["full"]["images"])
    assert {"choice", "numeric", "set", "text"} <= set(legacy["full"]["keys"][0])


def test_the_key_columns_give_back_each_rows_typed_key(harness_release, modern):
    """`key` is the typed key as JSON text, whatever the format; `answer_text` its plain text."""
    from scoring import key_text, parse_key

    workspace, _, _ = harness_release
    rows = modern["full"]
    for row in rows:
        stored = workspace.store.get(row["id"]).item
        key = parse_key(json.loads(row["key"]))
        assert key == stored.answer and row["answer_format"] == key.format
        assert row["answer_text"] == key_text(key) and row["points"] == stored.points
        if key.format == "choice":
            assert row["answers"] == key.options
        else:
            assert (row["answer"], row["answers"]) == (None, [])
    assert any(row["points"] for row in rows)


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
            for name in KEY_COLUMNS:
                value = record[f"{config}/{name}"]
                value = value.decode() if isinstance(value, bytes) else value
                if row[name] is None:
                    assert value is None or value != value, (row["id"], name)  # null, or NaN for a float
                else:
                    assert value == row[name], (row["id"], name)
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


def _open_question(path, row) -> str:
    """What VLMEvalKit should show for an open-answer row: benchsmith's prompt for it, images numbered."""
    from export.image_numbering import numbered_text

    record = next(json.loads(line) for line in (path / "harness" / "prompts" / "full.jsonl").read_text(
        encoding="utf-8").splitlines() if json.loads(line)["id"] == row["id"])
    return numbered_text(record["content"])


def test_vlmevalkit_tables_keep_every_row_and_every_image(harness_release, modern):
    _, path, counts = harness_release
    folder = path / "harness" / "vlmevalkit"
    readme = (path / "harness" / "README.md").read_text(encoding="utf-8")
    for config, rows in modern.items():
        text_file, image_file = folder / f"{config}.tsv", folder / f"{config}_image.tsv"
        open_file = folder / f"{config}_openended_image.tsv"
        loaded = []
        if text_file.exists():
            assert "image" not in text_file.read_text(encoding="utf-8").splitlines()[0].split("\t")
            loaded += load_mcq_tsv(text_file)
        if image_file.exists():
            loaded += load_mcq_tsv(image_file)
        opened = load_mcq_tsv(open_file) if open_file.exists() else []
        choice = [row for row in rows if row["answer_format"] == "choice"]
        carried_open = [row for row in rows if row["answer_format"] != "choice" and _image_sizes(row)]
        left = [row for row in rows if row["answer_format"] != "choice" and not _image_sizes(row)]
        assert sorted(r["id"] for r in loaded) == sorted(row["id"] for row in choice)  # no choice row dropped
        assert sorted(r["id"] for r in opened) == sorted(row["id"] for row in carried_open)
        if left:  # what VLMEvalKit cannot carry is said, per config
            assert f"`{config}` {len(left)}" in readme.split("Not carried by VLMEvalKit", 1)[1].split("\n")[0]
        by_id = {r["id"]: r for r in loaded + opened}
        for row in choice + carried_open:
            got = by_id[row["id"]]
            assert [image.size for image in got["images"]] == _image_sizes(row)
            if row["answer_format"] != "choice":
                assert got["question"] == _open_question(path, row) and got["options"] == {}
                assert (got["answer"], json.loads(got["key"])) == (row["answer_text"], json.loads(row["key"]))
                continue
            question, options = _numbered_cells(row)
            if got["images"]:  # first a note saying how many images come before the text
                note, _, got["question"] = got["question"].partition("\n")
                assert note.startswith("※") and f"그림 {len(got['images'])}장" in note, note
            assert got["question"] == question
            assert list(got["options"].values()) == options
            assert got["answer"] == ",".join("ABCDEFGHIJ"[n - 1] for n in row["answers"])
    assert any(load_mcq_tsv(folder / "full_image.tsv"))
    assert any(load_mcq_tsv(folder / "full_openended_image.tsv"))


def test_the_vlmevalkit_script_scores_prediction_files_as_the_replies_say(harness_release, modern, tmp_path):
    """Prediction files as VLMEvalKit writes them (the table's rows, without images, with a
    `prediction` column) for the MCQ and open-ended tables: every row's outcome is the one the
    test's table of replies gives, a multi-answer row's too."""
    import pandas as pd

    _, path, _ = harness_release
    folder = path / "harness" / "vlmevalkit"
    rows = {row["id"]: row for row in modern["full"]}
    predictions = []
    for name in ("full.tsv", "full_image.tsv", "full_openended_image.tsv"):
        table = pd.read_csv(folder / name, sep="\t").drop(columns=["image"], errors="ignore")
        table["prediction"] = [scripted_reply(rows[i]["question"], len(rows[i]["options"])) for i in table["id"]]
        predictions.append(tmp_path / name.replace(".tsv", "_pred.tsv"))
        table.to_csv(predictions[-1], sep="\t", index=False)
    output = tmp_path / "scores.json"
    done = subprocess.run([sys.executable, str(folder / SCRIPT), *map(str, predictions), "--output", str(output)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    scored = json.loads(output.read_text(encoding="utf-8"))
    per_item = {item_id: item["outcome"] for result in scored.values() for item_id, item in result["items"].items()}
    carried = [row for row in modern["full"] if row["answer_format"] == "choice" or _image_sizes(row)]
    assert per_item == {row["id"]: expected_outcome(row) for row in carried}
    assert {"multi-any", "multi-all", "open-num-image"} <= set(per_item)
    assert "accuracy" in done.stdout
