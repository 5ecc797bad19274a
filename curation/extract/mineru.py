"""MinerU output as an extraction source, and running MinerU when it is installed with local models.

Read formats (the same segmentation then runs on them):
- `*_middle.json` (MinerU 0.x, 1.x and 2.x, pipeline or vlm backend): `pdf_info[]` pages with
  `page_idx`, `page_size` [w, h] and `para_blocks` whose bboxes are in PDF points; lines → spans
  (`text`, `inline_equation` → `\\( \\)`, `interline_equation` → `$$ $$`, `image` spans with `img_path`);
  `discarded_blocks` (headers, footers, page numbers) are dropped. Preferred when present.
- `*_content_list.json`: MinerU 1.x (no bbox: the page is the only position) and 2.x (bbox
  normalised to 0–1000 of the page, converted to points with the PDF's page sizes); `text`
  (paragraphs, split again before `N.` question numbers), `image`, `table` (`img_path`), `equation`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

from curation.core.errors import BenchsmithError
from curation.extract.lines import CIRCLED_MARKERS, FULL, LEFT, RIGHT, Box, Cell, Figure, Line
from curation.imaging import png_bytes

INSTALL_HINT = ("MinerU is not installed here: pip install 'benchsmith[mineru]', put its models on disk and set "
                "MINERU_MODEL_SOURCE=local, or pass --mineru-output DIR with output made elsewhere")
_QUESTION_SPLIT = re.compile(r"\s+(?=\d{1,3}\s*\.\s)")


class MineruError(BenchsmithError):
    exit_code = 2


def find_output_files(folder: Path) -> tuple[Path | None, Path | None]:
    middle = sorted(folder.rglob("*_middle.json"))
    content = sorted(folder.rglob("*_content_list.json"))
    return (middle[0] if middle else None), (content[0] if content else None)


def read_mineru_output(folder: Path, page_sizes: list[tuple[float, float]]) -> list[Line | Figure]:
    """Lines and figures in MinerU's reading order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MineruError(f"{folder}: no such MinerU output folder")
    middle, content = find_output_files(folder)
    try:
        if middle is not None:
            return _from_middle(json.loads(middle.read_text(encoding="utf-8")), middle.parent)
        if content is not None:
            return _from_content_list(json.loads(content.read_text(encoding="utf-8")), content.parent, page_sizes)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise MineruError(f"{folder}: not MinerU output I can read ({error})") from None
    raise MineruError(f"{folder}: no *_middle.json or *_content_list.json inside")


def _box(values: Any) -> Box:
    """Four numbers as a box; a bbox of any other length is not MinerU output (ValueError)."""
    x0, y0, x1, y1 = (float(v) for v in values)
    return (x0, y0, x1, y1)


def _region(box: tuple[float, float, float, float], width: float) -> int:
    middle = width / 2
    if box[2] <= middle + 4:
        return LEFT
    if box[0] >= middle - 4:
        return RIGHT
    return FULL


def _line(page: int, box: tuple[float, float, float, float], text: str, width: float) -> Line:
    text = text.strip()
    markers = []
    span = (box[2] - box[0]) / max(len(text), 1)
    for index, char in enumerate(text):
        if char in CIRCLED_MARKERS:  # no glyph boxes in MinerU output: place markers by character share
            markers.append((char, box[0] + index * span, box[0] + (index + 1) * span))
    size = max(box[3] - box[1], 1.0)
    return Line(page, _region(box, width), box, text, size, [Cell(box[0], box[2], text)], markers, source="mineru")


def _image(path: Path, page: int, box: tuple[float, float, float, float], width: float) -> Figure | None:
    if not path.is_file():
        return None
    with Image.open(path) as image:
        png = png_bytes(image)
    return Figure(page, _region(box, width), box, png, "raster")


def _span_text(span: dict[str, Any]) -> str:
    content = str(span.get("content", ""))
    kind = span.get("type")
    if kind == "inline_equation":
        return f"\\({content.strip()}\\)"
    if kind == "interline_equation":
        return f"$${content.strip()}$$"
    return content


def _from_middle(data: dict[str, Any], base: Path) -> list[Line | Figure]:
    entries: list[Line | Figure] = []
    for page in data["pdf_info"]:
        number = int(page["page_idx"]) + 1
        width = float(page["page_size"][0])
        for block in page.get("para_blocks", []):
            children = block.get("blocks") or [block]
            for child in children:
                for line in child.get("lines", []):
                    box = _box(line["bbox"])
                    image_spans = [s for s in line.get("spans", []) if s.get("type") in ("image", "table") and s.get("img_path")]
                    for span in image_spans:
                        figure = _image(base / "images" / Path(span["img_path"]).name, number,
                                        _box(span["bbox"]), width)
                        if figure is not None:
                            entries.append(figure)
                    text = "".join(_span_text(s) for s in line.get("spans", []) if s not in image_spans)
                    if text.strip():
                        entries.append(_line(number, box, text, width))
    return entries


def _from_content_list(data: list[dict[str, Any]], base: Path, page_sizes: list[tuple[float, float]]) -> list[Line | Figure]:
    entries: list[Line | Figure] = []
    for block in data:
        number = int(block.get("page_idx", 0)) + 1
        width, height = page_sizes[number - 1] if number - 1 < len(page_sizes) else (1000.0, 1000.0)
        raw = block.get("bbox")
        box = (_box(float(v) * s / 1000 for v, s in zip(raw, (width, height, width, height), strict=True))
               if raw else (0.0, 0.0, width, height))
        kind = block.get("type")
        if kind in ("image", "table") and block.get("img_path"):
            figure = _image(base / block["img_path"], number, box, width)
            if figure is not None:
                entries.append(figure)
            continue
        text = str(block.get("text", ""))
        if kind == "equation":
            text = text.strip() if text.strip().startswith("$$") else f"$${text.strip()}$$"
        pieces = [piece for piece in _QUESTION_SPLIT.split(text.replace("\n", " ")) if piece.strip()]
        for index, piece in enumerate(pieces):  # share the block's box among its pieces, top to bottom
            top = box[1] + (box[3] - box[1]) * index / len(pieces)
            bottom = box[1] + (box[3] - box[1]) * (index + 1) / len(pieces)
            entries.append(_line(number, (box[0], top, box[2], bottom), piece, width))
    return entries


def run_mineru(pdf: Path, out_dir: Path) -> Path:
    """Run the MinerU CLI (2.x `mineru`, or 1.x `magic-pdf`) on one PDF; one clear line when it cannot."""
    binary = shutil.which("mineru") or shutil.which("magic-pdf")
    if binary is None:
        raise MineruError(INSTALL_HINT)
    command = [binary, "-p", str(pdf), "-o", str(out_dir)]
    if Path(binary).name == "mineru":
        command += ["-b", "pipeline"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.SubprocessError) as error:
        raise MineruError(f"{pdf}: MinerU failed to run: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}").splitlines()[-1]
        raise MineruError(f"{pdf}: MinerU failed (are its models on disk? MINERU_MODEL_SOURCE=local): {last[:200]}")
    return out_dir


def extract_with_mineru(pdf: Path, workspace, options, key, output: Path | None):  # noqa: ANN001, ANN201
    """`--engine mineru`: read MinerU output (given or made now) into items, like the other engines."""
    from curation.extract.pdf_open import open_pdf
    from curation.extract.pipeline import extract_items_from_entries, write_extraction

    opened = open_pdf(pdf)
    sizes = [(page.rect.width, page.rect.height) for page in opened.doc.pages()]
    if output is None:
        with tempfile.TemporaryDirectory(prefix="benchsmith-mineru-") as folder:
            entries = read_mineru_output(run_mineru(pdf, Path(folder)), sizes)
    else:
        entries = read_mineru_output(output, sizes)
    extraction = extract_items_from_entries(opened, entries, options, key, engine="mineru")
    return write_extraction(extraction, workspace, options)
