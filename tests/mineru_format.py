"""Writing MinerU-format output (middle.json, content_list.json, images/) for a PDF, so the MinerU
adapter is tested on files shaped like MinerU's own without running MinerU."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pymupdf

from curation.imaging import pixmap_image, png_bytes

MARGIN_TOP, MARGIN_BOTTOM = 50, 800


def _column_order(blocks: list[dict], width: float) -> list[dict]:
    return sorted(blocks, key=lambda b: (b["bbox"][0] >= width / 2 - 5 and b["bbox"][2] <= width, b["bbox"][1]))


def write_mineru_output(pdf: Path, out: Path, version: str = "2.1.0") -> Path:
    """`out/<stem>/auto/` with `<stem>_middle.json`, `<stem>_content_list.json` and `images/`."""
    stem = pdf.stem
    folder = out / stem / "auto"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open(pdf)
    pages, content = [], []
    for index, page in enumerate(doc):
        width, height = page.rect.width, page.rect.height
        para, discarded = [], []
        blocks = [b for b in page.get_text("dict")["blocks"] if b["type"] == 0]
        for block in _column_order(blocks, width):
            lines = []
            for line in block["lines"]:
                if line["dir"][0] < 0.99:
                    continue  # the watermark
                spans = [{"bbox": list(s["bbox"]), "type": "text", "content": s["text"], "score": 1.0}
                         for s in line["spans"] if s["text"].strip()]
                if spans:
                    lines.append({"bbox": list(line["bbox"]), "spans": spans})
            if not lines:
                continue
            target = discarded if block["bbox"][3] < MARGIN_TOP or block["bbox"][1] > MARGIN_BOTTOM else para
            target.append({"type": "text", "bbox": list(block["bbox"]), "lines": lines})
            if target is para:
                text = " ".join(span["content"].strip() for line in lines for span in line["spans"])
                content.append({"type": "text", "text": text, "page_idx": index,
                                "bbox": [round(v / s * 1000) for v, s in zip(block["bbox"], (width, height, width, height),
                                                                               strict=True)]})
        for info in page.get_image_info(xrefs=True):
            png = png_bytes(pixmap_image(pymupdf.Pixmap(doc, info["xref"])))
            name = f"{hashlib.sha256(png).hexdigest()}.png"
            (folder / "images" / name).write_bytes(png)
            box = list(info["bbox"])
            body = {"type": "image_body", "bbox": box,
                    "lines": [{"bbox": box, "spans": [{"bbox": box, "type": "image", "img_path": name}]}]}
            para.append({"type": "image", "bbox": box, "blocks": [body]})
            content.append({"type": "image", "img_path": f"images/{name}", "img_caption": [], "page_idx": index,
                            "bbox": [round(v / s * 1000) for v, s in zip(box, (width, height, width, height), strict=True)]})
        para.sort(key=lambda b: (b["bbox"][0] >= width / 2 - 5, b["bbox"][1]))
        pages.append({"page_idx": index, "page_size": [width, height], "para_blocks": para,
                      "discarded_blocks": discarded, "images": [], "tables": [], "interline_equations": []})
    (folder / f"{stem}_middle.json").write_text(json.dumps({"pdf_info": pages, "_backend": "pipeline",
                                                            "_version_name": version}, ensure_ascii=False), encoding="utf-8")
    (folder / f"{stem}_content_list.json").write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return out
