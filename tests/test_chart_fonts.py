"""Charts with Korean labels draw every Hangul glyph (no "Glyph … missing" warning), in the font
that comes with the Python install where it is installed, and leave the caller's matplotlib
settings as they were. In a process of its own, as a user's script would call it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
ROOT = Path(__file__).resolve().parents[1]

DRAW = """
import json, sys, warnings
import matplotlib
matplotlib.use("Agg")
matplotlib.rcParams["font.family"] = ["serif"]  # the caller's own setting
from evaluation.correlation import Correlation, plot_heatmap
from filtering.shift import plot_composition
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    plot_heatmap([], ["정확도", "subject:기상학", "part:1과목"], __import__("pathlib").Path(sys.argv[1]) / "tau.png",
                 "과목별 상관")
    plot_composition({"full": {"기상학": 0.5, "대기역학": 0.5}, "hard": {"기상학": 1.0}},
                     __import__("pathlib").Path(sys.argv[1]) / "composition.png", "과목 구성")
from matplotlib import font_manager
print(json.dumps({"warnings": [str(w.message) for w in caught], "family": matplotlib.rcParams["font.family"],
                  "packaged": [f.name for f in font_manager.fontManager.ttflist if "noto_cjk_sans_otc" in f.fname]}))
"""


def test_hangul_charts_warn_of_no_missing_glyph_and_keep_the_callers_settings(tmp_path):
    done = subprocess.run([sys.executable, "-c", DRAW, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    missing = [message for message in out["warnings"] + done.stderr.splitlines() if "missing from font" in message]
    assert missing == []
    assert out["family"] == ["serif"]
    assert (tmp_path / "tau.png").stat().st_size > 0 and (tmp_path / "composition.png").stat().st_size > 0
    if importlib.util.find_spec("noto_cjk_sans_otc") is not None:  # the `report` extra's font package
        assert [name for name in out["packaged"] if name.startswith("Noto Sans CJK")]


def test_without_the_korean_font_a_chart_warns_of_missing_glyphs(tmp_path):
    """What the test above guards against, seen: DejaVu Sans alone has no Hangul."""
    script = ("import warnings, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
              "with warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
              "    fig, ax = plt.subplots(); ax.set_title('과목'); fig.savefig(r'%s')\n"
              "print(sum('missing from font' in str(w.message) for w in caught))\n" % (tmp_path / "plain.png"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={"MPLCONFIGDIR": str(tmp_path / "mpl"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip()) > 0
