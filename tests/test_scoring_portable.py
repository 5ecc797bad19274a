"""`scoring/portable` is copied whole into every release's `harness/` folder: it must import,
and score, with nothing but the standard library and its own files, under any package name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import scoring.portable

PORTABLE = Path(scoring.portable.__file__).parent

SCRIPT = textwrap.dedent("""
    import json, sys
    before = set(sys.modules)
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "block":
        sys.modules["math_verify"] = None  # as if Math-Verify were not installed
    import harness_scoring as hs

    results = {
        "choice": hs.score_response({"format": "choice", "options": [1]}, "정답: D 플립플롭",
                                    options=["D 플립플롭", "T 플립플롭"]).as_dict(),
        "numeric": hs.score_response({"format": "numeric", "value": "0.012", "unit": "m"}, "정답: 12 mm").as_dict(),
        "set": hs.score_response({"format": "set", "members": ["ㄱ", "ㄹ"]}, "정답: ㄹ, ㄱ").as_dict(),
        "text": hs.score_response({"format": "text", "accepted": ["핵인"]}, "\\\\boxed{핵인}").as_dict(),
        "judged": hs.score_response({"format": "judged", "reference": "r"}, "정답: 서술").as_dict(),
        "parts": hs.score_response({"format": "parts", "parts": [{"format": "numeric", "value": "2"},
                                    {"format": "set", "members": ["ㄴ"]}]}, "정답: (1) 2 (2) ㄴ").as_dict(),
        "key": hs.guess_key("ㄴ, ㄷ, ㄹ", "객관식(복수정답)"),
    }
    stdlib_only = sorted(name for name in set(sys.modules) - before
                         if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "harness_scoring")
    results["expression"] = hs.score_response({"format": "expression", "latex": "(x+1)^2"},
                                              "\\\\boxed{x^2+2x+1}").as_dict()
    new = set(sys.modules) - before
    results["outside_stdlib"] = stdlib_only
    results["foreign"] = sorted(name for name in new if name.split(".")[0] in
                                ("pydantic", "scoring", "benchsmith", "curation", "evaluation", "filtering", "export"))
    results["math_verify"] = any(name.split(".")[0] == "math_verify" for name in new if sys.modules.get(name))
    print(json.dumps(results, ensure_ascii=False))
""")


def _run(tmp_path: Path, mode: str) -> dict:
    package = tmp_path / "harness" / "harness_scoring"
    if not package.exists():
        shutil.copytree(PORTABLE, package, ignore=shutil.ignore_patterns("__pycache__"))
    script = tmp_path / "score.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(script), str(package.parent), mode], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_copy_under_another_name_scores_with_the_standard_library_alone(tmp_path: Path) -> None:
    results = _run(tmp_path, "allow")
    for name in ("choice", "numeric", "set", "text", "parts"):
        assert results[name]["outcome"] == "correct", (name, results[name])
    assert results["judged"]["outcome"] == "undecided"
    assert results["key"] == {"format": "set", "members": ["ㄴ", "ㄷ", "ㄹ"]}
    assert results["outside_stdlib"] == []  # choice, numeric, set, text, parts: stdlib only
    assert results["foreign"] == []  # no pydantic, no benchsmith package
    assert results["expression"]["outcome"] == "correct"  # Math-Verify, imported lazily
    assert results["math_verify"]


def test_without_math_verify_expressions_are_undecided_and_say_how_to_fix_it(tmp_path: Path) -> None:
    results = _run(tmp_path, "block")
    assert results["numeric"]["outcome"] == "correct"
    assert results["expression"]["outcome"] == "undecided"
    assert "pip install math-verify" in results["expression"]["explanation"]
    assert not results["math_verify"] and results["foreign"] == []


def test_portable_sources_import_only_the_standard_library_and_themselves() -> None:
    """Math-Verify (and sympy, which comes with it) only in `mathverify.py`, and only inside
    functions (lazily)."""
    import ast

    for path in PORTABLE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names:
                    continue
                assert top in ("math_verify", "sympy") and path.name == "mathverify.py", f"{path.name} imports {name}"
                assert node.col_offset > 0, f"{path.name} imports {name} at module level"
