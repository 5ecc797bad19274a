"""Converting lists with pyarrow does not import pandas; asking pyarrow for pandas still works."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_list_conversions_leave_pandas_unimported_and_pandas_round_trips_still_work():
    script = textwrap.dedent("""
        import sys
        from curation.arrow import pa
        from evaluation.cells import CELL_SCHEMA
        CELL_SCHEMA.empty_table()
        table = pa.Table.from_pylist([{"a": 1, "b": "x"}, {"a": None, "b": "y"}])
        assert "pandas" not in sys.modules, "a list conversion imported pandas"
        frame = table.to_pandas()
        assert list(frame["b"]) == ["x", "y"]
        back = pa.Table.from_pandas(frame, preserve_index=False)
        assert back.column("b").to_pylist() == ["x", "y"] and back.column("a").null_count == 1
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
