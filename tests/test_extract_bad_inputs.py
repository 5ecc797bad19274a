"""Bad input: one clear line naming the file (and page), the other files still extracted, and
nothing of a failing PDF written."""

from __future__ import annotations

import pymupdf
import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from curation.core.workspace import init_workspace
from curation.extract.pdf_open import PdfError, open_pdf
from curation.extract.pipeline import ExtractOptions, extract_pdf


def _question_page(doc: pymupdf.Document) -> pymupdf.Page:
    page = doc.new_page()
    page.insert_font(fontname="kr", fontbuffer=pymupdf.Font("korea").buffer)
    for y, text in ((100, "1. 대기의 주성분은?"), (120, "① 질소   ② 헬륨   ③ 네온   ④ 수소"),
                    (150, "2. 지균풍은 어떤 힘의 평형인가?"), (170, "① 기압경도력과 전향력   ② 마찰력   ③ 원심력   ④ 중력")):
        page.insert_text((72 if text[0].isdigit() else 84, y), text, fontname="kr", fontsize=11)
    return page


def make_good(path):
    doc = pymupdf.open()
    _question_page(doc)
    doc.save(path)
    return path


def make_cycle_on_page_2(path):
    """Page 1 is fine; page 2 is a page-tree node that contains itself (MuPDF cannot load it)."""
    doc = pymupdf.open()
    page = _question_page(doc)
    pages = int(doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0])
    loop = doc.get_new_xref()
    doc.update_object(loop, f"<< /Type /Pages /Parent {pages} 0 R /Kids [{loop} 0 R] /Count 1 >>")
    doc.xref_set_key(pages, "Kids", f"[{page.xref} 0 R {loop} 0 R]")
    doc.xref_set_key(pages, "Count", "2")
    doc.save(path)
    return path


def make_encrypted(path):
    doc = pymupdf.open()
    _question_page(doc)
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    return path


def make_zero_pages(path):
    body = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out, offsets = b"%PDF-1.7\n", []
    for number, obj in enumerate(body, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(body) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(body) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(out)
    return path


def make_corrupt(path):
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    return path


def make_not_pdf(path):
    path.write_text("번호,정답\n1,③\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("maker", "message"), [
    (make_not_pdf, "not a PDF"),
    (make_corrupt, "corrupt PDF|no pages"),
    (make_encrypted, "encrypted PDF"),
    (make_zero_pages, "has no pages"),
])
def test_unreadable_pdfs_are_refused_with_their_name(tmp_path, maker, message):
    path = maker(tmp_path / f"{maker.__name__}.pdf")
    with pytest.raises(PdfError, match=message) as raised:
        open_pdf(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_a_page_that_cannot_be_read_names_the_page_and_writes_nothing(tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    path = make_cycle_on_page_2(tmp_path / "half.pdf")
    with pytest.raises(PdfError, match=r"half\.pdf: page 2: "):
        extract_pdf(path, workspace, ExtractOptions())
    assert list(workspace.store.iter_items()) == []  # page 1's questions were not half-written
    assert not any(workspace.blobs_dir.iterdir())


def test_cli_reports_each_bad_file_and_still_extracts_the_good_one(tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    bad = [make_not_pdf(tmp_path / "notes.pdf"), make_encrypted(tmp_path / "locked.pdf"),
           make_zero_pages(tmp_path / "empty.pdf"), make_cycle_on_page_2(tmp_path / "half.pdf")]
    good = make_good(tmp_path / "good.pdf")
    result = CliRunner().invoke(app, ["extract", "-w", str(workspace.root), *map(str, bad), str(good), "--exam", "t"])
    assert result.exit_code == 1
    output = result.output
    for path in bad:
        assert sum(1 for line in output.splitlines() if line.startswith("error:") and str(path) in line) == 1
    assert "half.pdf: page 2" in output
    items = [stored.item for stored in workspace.store.iter_items()]
    assert [item.source.number for item in items] == [1, 2]
    assert [len(item.options) for item in items] == [4, 4]
    assert items[1].options[0].text == "기압경도력과 전향력"
