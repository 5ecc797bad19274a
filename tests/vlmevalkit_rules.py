"""How VLMEvalKit reads an MCQ (or custom open-ended) TSV, following its loading code (vlmeval/dataset/image_base.py,
text_base.py, image_mcq.py; the package itself needs torch and many model libraries):

- a table with an `image` column is an image dataset: rows whose `image` is empty are dropped
  (`skip_noimg`), and an `image` of 64 characters or fewer is read as the index of another
  row whose image it shares;
- an `image` cell that looks like a list (`['…', '…']`) holds several base64 images, which
  VLMEvalKit writes to the names the row's `image_path` lists (`dump_image` asserts it has one);
- the options are the columns A, B, C … whose cell is not empty (an empty cell drops it).
"""

from __future__ import annotations

import ast
import base64
import io
import string
from pathlib import Path
from typing import Any


def load_mcq_tsv(path: Path) -> list[dict[str, Any]]:
    import pandas as pd
    from PIL import Image

    data = pd.read_csv(path, sep="\t")
    if "image" in data:
        data = data[~pd.isna(data["image"])]
    data["index"] = [str(x) for x in data["index"]]
    rows = []
    images_by_index = {}
    if "image" in data:
        images_by_index = {i: str(v) for i, v in zip(data["index"], data["image"], strict=True)}
        for key, value in list(images_by_index.items()):
            if len(value) <= 64:
                assert value in images_by_index and len(images_by_index[value]) > 64, f"row {key}: bad image ref"
                images_by_index[key] = images_by_index[value]
    for record in data.to_dict("records"):
        options = {c: record[c] for c in string.ascii_uppercase if c in record and not pd.isna(record[c])}
        raw = images_by_index.get(record["index"])
        several = bool(raw and raw.startswith("[") and raw.endswith("]"))
        encoded = [str(x) for x in ast.literal_eval(raw)] if several else [raw] if raw else []
        if several:
            paths = ast.literal_eval(str(record.get("image_path")))
            assert isinstance(paths, list) and len(paths) == len(encoded), f"row {record['index']}: no image_path"
        images = [Image.open(io.BytesIO(base64.b64decode(item))) for item in encoded]
        rows.append({**record, "options": options, "images": images})
    return rows
