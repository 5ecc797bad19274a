"""Importing benchsmith changes no other library's behaviour in the process: after every
benchsmith module is imported, pyarrow converts pandas objects exactly as it does in a clean
process (`datasets`, `mlcroissant` or a user's notebook share the process with us)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scoring", "curation", "evaluation", "filtering", "export", "annotator", "benchsmith", "data_cards")

IMPORT_EVERYTHING = f"""
import importlib, pkgutil
for top in {PACKAGES!r}:
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        # harness_files are scripts copied into releases (they import the harnesses), not our modules
        if not info.name.startswith("export.harness_files") and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
"""

CONVERT = """
import json
import pandas as pd
import pyarrow as pa
out = {}
for name, make in (("categorical", lambda: pd.Series(pd.Categorical(["a", "b"]))),
                   ("nullable Int64", lambda: pd.Series([1, None, 3], dtype="Int64")),
                   ("list then categorical", lambda: (pa.array([1, 2]), pd.Series(pd.Categorical(["x"])))[1])):
    try:
        array = pa.array(make())
        out[name] = [str(array.type), array.to_pylist(), array.null_count]
    except Exception as error:
        out[name] = ["raised", type(error).__name__]
print(json.dumps(out))
"""


def _conversions(prelude: str) -> dict:
    done = subprocess.run([sys.executable, "-c", prelude + CONVERT], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_pyarrow_converts_pandas_objects_after_every_benchsmith_import_as_in_a_clean_process():
    clean = _conversions("")
    # what pyarrow itself does, stated so that a change of pyarrow is seen here rather than hidden
    assert clean["categorical"][0].startswith("dictionary<values="), clean
    assert clean["nullable Int64"] == ["int64", [1, None, 3], 1]
    assert _conversions(IMPORT_EVERYTHING) == clean


def test_a_list_conversion_after_importing_benchsmith_still_converts_pandas_objects_later():
    """The order that broke before: benchsmith converts a list first (pandas not yet imported),
    the user's code imports pandas afterwards."""
    first = "from evaluation.cells import CELL_SCHEMA\nCELL_SCHEMA.empty_table()\n"
    assert _conversions(first) == _conversions("")
