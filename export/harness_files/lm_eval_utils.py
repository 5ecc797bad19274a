"""lm-evaluation-harness helpers for this benchsmith release (copied in at build time).

The rows come from this release's parquet files, wherever lm_eval is started; prompts, images
and scoring come from `../benchsmith_release.py`, which scores every answer format with
benchsmith's own checkers (`../benchsmith_scoring/`), so a response scores as in `benchsmith
report`. lm_eval's API models send every image before the text, so the text numbers them where
they stood (`../benchsmith_images.py`).
"""

import json
import os
import sys

# harness/ holds the shared modules; abspath, not resolve(): in the Hub cache this file is a
# symlink into blobs/, where nothing else of the release is
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchsmith_images as numbering  # noqa: E402
import benchsmith_release as release  # noqa: E402


def load_config(config="full", **_metadata):
    """`custom_dataset`: the config's rows with benchsmith's prompt for each."""
    import datasets

    loaded = datasets.load_dataset("parquet", data_files={"test": release.data_files(config)})
    table = release.prompts(config)
    test = loaded["test"]
    test = test.add_column("benchsmith_prompt", [json.dumps(table[row_id], ensure_ascii=False) for row_id in test["id"]])
    test = test.add_column("benchsmith_system", [table[row_id]["system"] for row_id in test["id"]])
    return datasets.DatasetDict({"test": test})


def doc_to_text(doc):
    return numbering.numbered_text(json.loads(doc["benchsmith_prompt"])["content"])


def doc_to_image(doc):
    return release.images(doc, json.loads(doc["benchsmith_prompt"]))


def doc_to_target(doc):
    return release.target(doc)


def process_results(doc, results):
    """`acc` (1 when correct) and, for the outcomes benchsmith reports apart, `unparseable`, `error`
    and `undecided` (lm_eval's API model does not pass the finish reason on: a reply cut off at the
    token limit is scored from its text)."""
    return release.outcome_metrics(release.score(results[0], doc))
