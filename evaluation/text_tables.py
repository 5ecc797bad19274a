"""One table, two renderings: Markdown for reports and a booktabs LaTeX table for the paper."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


@dataclass
class TextTable:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def latex(self, label: str) -> str:
        columns = "l" + "r" * (len(self.header) - 1)
        lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{columns}}}", r"\toprule",
                 " & ".join(latex_escape(h) for h in self.header) + r" \\", r"\midrule"]
        lines += [" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if self.caption:
            lines.append(rf"\caption{{{latex_escape(self.caption)}}}")
        lines += [rf"\label{{tab:{label}}}", r"\end{table}"]
        return "\n".join(lines) + "\n"


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text).replace("±", r"$\pm$")


def write_table(table: TextTable, out_dir: Path, name: str) -> list[Path]:
    """NAME.md and NAME.tex in out_dir."""
    md, tex = out_dir / f"{name}.md", out_dir / f"{name}.tex"
    md.write_text((f"{table.caption}\n\n" if table.caption else "") + table.markdown(), encoding="utf-8")
    tex.write_text(table.latex(name), encoding="utf-8")
    return [md, tex]
