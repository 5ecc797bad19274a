"""The CLI as a user runs it: a real subprocess, real exit codes, one-line errors."""

import json
import subprocess
import sys

from .conftest import run_cli
from .helpers import make_record


def _ws(tmp_path):
    ws = tmp_path / "ws"
    result = run_cli("init", str(ws))
    assert result.returncode == 0, result.stderr
    return ws


def test_init_creates_the_workspace_layout(tmp_path):
    ws = _ws(tmp_path)
    for name in ("benchsmith.toml", "store.db", "blobs", "cache.db", "runs", "releases"):
        assert (ws / name).exists(), name
    again = run_cli("init", str(ws))
    assert again.returncode == 1 and "already a workspace" in again.stderr


def test_import_stats_show_edit_and_history(tmp_path):
    ws = _ws(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(make_record(f"q-{n}", subject="기후학")) for n in range(3)) + "\n",
                     encoding="utf-8")
    imported = run_cli("items", "import", str(items), "-w", str(ws))
    assert imported.returncode == 0 and "3 new" in imported.stdout, imported.stderr
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert stats["items"] == 3 and stats["by_subject"] == {"기후학": 3}

    edited = run_cli("items", "edit", "q-1", "--set", "stem=바뀐 문제 $x^2$", "--set", "answer=3",
                     "--expect-rev", "1", "--reason", "오타", "-w", str(ws), env={"BENCHSMITH_USER": "alice"})
    assert edited.returncode == 0 and "revision 2" in edited.stdout, edited.stderr

    stale = run_cli("items", "edit", "q-1", "--set", "answer=4", "--expect-rev", "1", "-w", str(ws),
                    env={"BENCHSMITH_USER": "bob"})
    assert stale.returncode == 3
    assert "conflict on item 'q-1'" in stale.stderr and "rev 2 by alice" in stale.stderr
    assert "Traceback" not in stale.stderr

    shown = json.loads(run_cli("items", "show", "q-1", "--history", "--json", "-w", str(ws)).stdout)
    assert shown["rev"] == 2 and shown["item"]["stem"] == "바뀐 문제 $x^2$"
    assert shown["item"]["answer"] == {"format": "choice", "options": [3], "require_all": False}
    assert [(r["rev"], r["author"], r["changed_fields"]) for r in shown["history"]][1] == (2, "alice", ["answer", "stem"])
    text = run_cli("items", "show", "q-1", "--history", "-w", str(ws)).stdout
    assert "rev 2" in text and "오타" in text and '"보기 1"' not in text.split("rev 2")[-1]


def test_export_round_trip_through_the_cli(tmp_path):
    ws = _ws(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(make_record(f"q-{n}")) for n in range(5)) + "\n", encoding="utf-8")
    run_cli("items", "import", str(items), "-w", str(ws))
    out = tmp_path / "out.jsonl"
    assert run_cli("items", "export", "--format", "jsonl", "--out", str(out), "-w", str(ws)).returncode == 0
    other = tmp_path / "other"
    run_cli("init", str(other))
    assert run_cli("items", "import", str(out), "-w", str(other)).returncode == 0
    out2 = tmp_path / "out2.jsonl"
    run_cli("items", "export", "--out", str(out2), "-w", str(other))
    assert out.read_bytes() == out2.read_bytes()


def test_user_errors_are_one_clear_line(tmp_path):
    ws = _ws(tmp_path)
    cases = [
        (("items", "stats"), "no workspace given", {"BENCHSMITH_WORKSPACE": ""}),
        (("items", "stats", "-w", str(tmp_path / "nowhere")), "is not a benchsmith workspace", None),
        (("items", "show", "missing", "-w", str(ws)), "no item 'missing'", None),
        (("items", "edit", "x", "--set", "novalue", "--expect-rev", "1", "-w", str(ws)), "no item 'x'", None),
        (("items", "import", str(tmp_path / "missing.csv"), "-w", str(ws)), "no such file", None),
        (("items", "import", "a.csv", "--format", "xml", "-w", str(ws)), "--format 'xml'", None),
    ]
    for args, message, env in cases:
        result = run_cli(*args, env=env)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_malformed_config_is_named(tmp_path):
    ws = _ws(tmp_path)
    (ws / "benchsmith.toml").write_text("[store\nurl = 3", encoding="utf-8")
    result = run_cli("items", "stats", "-w", str(ws))
    assert result.returncode == 1 and "malformed config" in result.stderr and "benchsmith.toml" in result.stderr


def test_an_unreachable_database_is_named(tmp_path):
    ws = tmp_path / "pg"
    result = run_cli("init", str(ws), "--db", "postgresql+psycopg://nobody:x@127.0.0.1:1/none")
    assert result.returncode == 1 and "cannot open store" in result.stderr and "Traceback" not in result.stderr


def test_schema_prints_json_schema():
    result = run_cli("schema")
    assert result.returncode == 0 and json.loads(result.stdout)["title"] == "Item"


def test_the_root_command_table_matches_what_each_package_registers() -> None:
    """`benchsmith --help` lists commands from a static table; it must name every real command."""
    from benchsmith.cli import COMMANDS, load_package_commands

    registered: dict[str, tuple[str, str]] = {}
    for module in sorted({module for module, _ in COMMANDS.values()}):
        for name, command in load_package_commands(module).commands.items():
            registered[name] = (module, command.get_short_help_str(limit=200))
    assert registered == COMMANDS


def test_help_imports_no_package_of_the_pipeline() -> None:
    script = ("import sys; from benchsmith.cli import main; sys.argv = ['benchsmith', '--help']\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "heavy = [m for m in ('pymupdf', 'sqlalchemy', 'evaluation', 'filtering', 'export', 'annotator', 'gradio')"
              " if m in sys.modules]\nprint('HEAVY', heavy)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "HEAVY []" in result.stdout


def test_the_extract_command_lists_the_engines_the_extractor_has() -> None:
    from curation.extract.cli_command import ENGINES
    from curation.extract.document import ENGINES as EXTRACTOR_ENGINES

    assert ENGINES == EXTRACTOR_ENGINES


def test_every_data_file_of_the_packages_ships_in_the_wheel() -> None:
    """A file a package reads at run time must match pyproject's package-data, or only editable installs work."""
    import fnmatch
    import tomllib

    from .conftest import REPO

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["*"]
    packages = ("benchsmith", "curation", "annotator", "evaluation", "filtering", "export", "data_cards")
    data = [path for package in packages for path in (REPO / package).rglob("*")
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts]
    left_out = [str(path.relative_to(REPO)) for path in data if not any(fnmatch.fnmatch(path.name, p) for p in patterns)]
    assert data and left_out == []


def test_a_model_step_gets_its_model_clients_from_the_root_command_only(workspace) -> None:
    """The curation commands hold no client factory of their own: loaded without the root command
    (which hands them the evaluation runners'), a model-using step stops with one clear error."""
    import typer
    from typer.testing import CliRunner

    from curation import cli
    from curation.core.errors import BenchsmithError

    commands = typer.Typer()
    cli.register(commands)
    result = CliRunner().invoke(commands, ["paraphrase", "-m", "openai-compatible:fake@http://127.0.0.1:9/v1",
                                           "-w", str(workspace.root)])
    assert isinstance(result.exception, BenchsmithError)
    assert "need the evaluation runners" in str(result.exception)
