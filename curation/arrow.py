"""pyarrow, without the pandas import its first list conversion costs.

The first time pyarrow converts a Python list (`pa.array`, `Table.from_pylist`, even
`Schema.empty_table`) it imports pandas — half a second, on every pool command — only to ask
whether the list is a pandas object. No benchsmith code hands pyarrow pandas objects, so that
check is settled here, once, with pandas refused for that one call: pyarrow then treats lists
as lists. Where a caller does ask pyarrow for pandas (`to_pandas`, `Table.from_pandas`),
pyarrow imports it then as usual. Import `pa` from here in modules that convert lists.
"""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder

import pyarrow as pa


class _RefusePandas(MetaPathFinder):
    def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not imported for pyarrow's list check")
        return None


if "pandas" not in sys.modules:
    _finder = _RefusePandas()
    sys.meta_path.insert(0, _finder)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_finder)

__all__ = ["pa"]
