"""The MinerU adapter on MinerU-format files written by the project, and `--engine mineru` without MinerU."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from benchsmith.cli import app
from curation.core.workspace import init_workspace
from curation.extract.mineru import MineruError, read_mineru_output
from curation.extract.pdf_open import open_pdf
from curation.extract.pipeline import ExtractOptions, extract_items_from_entries

from .extract_truth import load_truth
from .mineru_format import write_mineru_output


def _extract(pdf, folder):
    opened = open_pdf(pdf)
    sizes = [(page.rect.width, page.rect.height) for page in opened.doc]
    return extract_items_from_entries(opened, read_mineru_output(folder, sizes), ExtractOptions(), None, engine="mineru")


def test_middle_json_gives_the_same_questions(sample_exam_dir, tmp_path):
    pdf = sample_exam_dir / "sample.pdf"
    extraction = _extract(pdf, write_mineru_output(pdf, tmp_path / "out"))
    truth = {item.source.number: item for item in load_truth(pdf.with_suffix(".truth.jsonl"))}
    got = {item.source.number: item for item in extraction.items}
    assert sorted(got) == sorted(truth)
    plain = [n for n, item in truth.items() if "\\(" not in item.stem and not item.images
             and all(option.image is None and "\\(" not in option.text for option in item.options)]
    assert len(plain) >= 18
    for number in plain:
        assert got[number].stem == truth[number].stem
        assert [option.text for option in got[number].options] == [option.text for option in truth[number].options]
        assert got[number].answer == truth[number].answer  # the key table page is read from MinerU's text too
    chart = next(n for n, item in truth.items() if any(image.kind == "raster" for image in item.images))
    assert got[chart].images[0].blob == truth[chart].images[0].blob
    assert all("MinerU" in " ".join(item.flags.review_reasons) for item in extraction.items)


def test_content_list_with_normalised_boxes(sample_exam_dir, tmp_path):
    pdf = sample_exam_dir / "sample.pdf"
    out = write_mineru_output(pdf, tmp_path / "out")
    for middle in out.rglob("*_middle.json"):
        middle.unlink()
    extraction = _extract(pdf, out)
    truth = {item.source.number: item for item in load_truth(pdf.with_suffix(".truth.jsonl"))}
    got = {item.source.number: item for item in extraction.items}
    assert sorted(got) == sorted(truth)
    assert sum(1 for n in truth if len(got[n].options) == 4) >= 24
    first = got[1].source.bbox  # 0–1000 boxes come back in points, near where the question is printed
    assert abs(first[0] - truth[1].source.bbox[0]) < 3 and abs(first[1] - truth[1].source.bbox[1]) < 30


def test_unreadable_output_folder_is_one_line(tmp_path):
    (tmp_path / "x_middle.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(MineruError, match="not MinerU output"):
        read_mineru_output(tmp_path, [(595, 842)])
    with pytest.raises(MineruError, match="no such"):
        read_mineru_output(tmp_path / "absent", [(595, 842)])



@pytest.mark.parametrize("bbox", [[10, 20, 300], [10, 20, 300, 40, 5]])
def test_a_bbox_that_is_not_four_numbers_is_one_line(tmp_path, bbox):
    line = {"bbox": bbox, "spans": [{"bbox": bbox, "type": "text", "content": "1. 기압은?"}]}
    page = {"page_idx": 0, "page_size": [595, 842], "para_blocks": [{"type": "text", "bbox": bbox, "lines": [line]}]}
    (tmp_path / "x_middle.json").write_text(json.dumps({"pdf_info": [page]}), encoding="utf-8")
    with pytest.raises(MineruError, match="not MinerU output"):
        read_mineru_output(tmp_path, [(595, 842)])

@pytest.mark.skipif(shutil.which("mineru") is not None or shutil.which("magic-pdf") is not None,
                    reason="MinerU is installed here")
def test_engine_mineru_without_mineru_says_so_in_one_line(sample_exam_dir, tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    result = CliRunner().invoke(app, ["extract", "-w", str(workspace.root), "--engine", "mineru",
                                      str(sample_exam_dir / "sample.pdf")])
    assert result.exit_code != 0
    assert "MinerU is not installed" in result.output
    assert list(workspace.store.iter_items()) == []


def test_engine_mineru_reads_given_output_through_the_cli(sample_exam_dir, tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    pdf = sample_exam_dir / "sample.pdf"
    out = write_mineru_output(pdf, tmp_path / "out")
    result = CliRunner().invoke(app, ["extract", "-w", str(workspace.root), "--engine", "mineru",
                                      "--mineru-output", str(out), str(pdf), "--json"])
    assert result.exit_code == 0, result.output
    assert sum(1 for _ in workspace.store.iter_items()) == len(load_truth(pdf.with_suffix(".truth.jsonl")))
