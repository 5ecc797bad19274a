"""`benchsmith keys`: answer-key files on their own (read one; write the generated sample table).

Registered apart from the other curation commands, as `extract` is: reading a key loads PyMuPDF
and the key readers, not the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from curation.extract.key_sheet import KeySection, KeySheet

keys_app = typer.Typer(help="Read answer-key files (PDF, CSV, JSON): forms, sections, answers, points.",
                       no_args_is_help=True)
GROUPS = 3  # (번호, 정답, 배점) column groups side by side in the table view


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")


@keys_app.command("read")
def read_command(
    key_file: Annotated[Path, typer.Argument(help="answer-key file: PDF (text layer, outlines or scan), CSV or JSON")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for scripts")] = False,
) -> None:
    """Read an answer-key file: every form, section and key (number, format, answer, 배점)."""
    from curation.cli_kit import print_json
    from curation.extract.key_files import read_key_sheet_file

    sheet = read_key_sheet_file(key_file)
    if as_json:
        print_json(sheet.to_json())
    else:
        show_sheet(sheet)


@keys_app.command("sample")
def sample_command(
    out_pdf: Annotated[Path, typer.Argument(help="where to write the key table PDF")],
    seed: Annotated[int, typer.Option(help="variation seed")] = 0,
    render: Annotated[str, typer.Option(help="text (a text layer), outlines (glyphs drawn as paths) or scan")] = "text",
) -> None:
    """Write the generated CSAT-math-shaped key table and its truth (OUT.keys.json)."""
    from curation.cli_kit import out
    from curation.core.errors import BenchsmithError
    from curation.sample_exam.key_table import RENDERS, write_key_table

    if render not in RENDERS:
        raise BenchsmithError(f"--render {render!r}: choose one of {', '.join(RENDERS)}")
    pdf, truth = write_key_table(out_pdf, seed=seed, render=render)  # type: ignore[arg-type]
    out.print(f"key table: {pdf}\nground truth: {truth}", highlight=False)


def show_sheet(sheet: KeySheet) -> None:
    from curation.cli_kit import out

    out.print(f"{sheet.source}: {len(sheet.forms)} form{'s' if len(sheet.forms) != 1 else ''}, {sheet.count()} keys",
              highlight=False, markup=False)
    for form in sheet.forms:
        where = f", page {form.page}" if form.page is not None else ""
        out.print(f"\nform {form.form or '(not named)'}{where}", highlight=False, markup=False)
        for section in form.sections:
            out.print(section_table(section))


def section_table(section: KeySection):  # noqa: ANN201 (a rich Table; rich loads with the command)
    from rich import box
    from rich.table import Table

    entries = sorted(section.keys, key=lambda entry: entry.number)
    numeric = sum(1 for entry in entries if entry.format == "numeric")
    title = f"{section.name or '(section not named)'}: {len(entries)} keys" + (f", {numeric} numeric" if numeric else "")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    groups = min(GROUPS, len(entries)) or 1
    rows = -(-len(entries) // groups)
    for _ in range(groups):
        table.add_column("번호", justify="right")
        table.add_column("정답", justify="center")
        table.add_column("배점", justify="right")
    for row in range(rows):
        cells: list[str] = []
        for group in range(groups):
            index = group * rows + row
            if index < len(entries):
                entry = entries[index]
                points = "" if entry.points is None else f"{entry.points:g}"
                cells += [str(entry.number), entry.answer_text(), points]
            else:
                cells += ["", "", ""]
        table.add_row(*cells)
    return table
