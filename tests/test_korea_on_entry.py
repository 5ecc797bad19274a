"""Korea tagging runs as a recorded stage whenever items enter the store (import, extraction)."""

from __future__ import annotations

import json

from curation.extract.pipeline import ExtractOptions, extract_pdf
from curation.importers import import_file
from curation.sample_exam import write_sample_exam
from curation.steps.korea import KoreaLexicon


def _stages(workspace, item_id):
    return [(r.stage, r.author) for r in workspace.store.history(item_id)]


def test_import_tags_korea_candidates_as_their_own_revision(workspace, tmp_path):
    rows = [{"id": "k-1", "source": {"exam": "예시"}, "stem": "장마 전선이 북상할 때 나타나는 현상은?", "options": [{"text": "가"}, {"text": "나"}], "answer": 1},
            {"id": "k-2", "source": {"exam": "예시"}, "stem": "기온 감률의 정의는?", "options": [{"text": "가"}, {"text": "나"}], "answer": 2}]
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    report = import_file(source, workspace.store, author="anna")
    assert (report.created, report.korea_tagged) == (2, 1)
    tagged = workspace.store.get("k-1")
    assert tagged.rev == 2 and any("장마" in reason for reason in tagged.item.flags.korea_reasons)
    assert _stages(workspace, "k-1") == [("import", "anna"), ("tag-korea", "anna/tag-korea")]
    assert workspace.store.get("k-2").rev == 1 and not workspace.store.get("k-2").item.flags.korea_reasons
    again = import_file(source, workspace.store, author="anna")  # unchanged rows: no new revisions
    assert (again.unchanged, again.skipped, again.korea_tagged) == (2, 0, 0) and workspace.store.get("k-1").rev == 2


def test_extraction_tags_korea_candidates(workspace, tmp_path):
    pdf, _ = write_sample_exam(tmp_path / "sample.pdf")
    report = extract_pdf(pdf, workspace, ExtractOptions(exam="기상기사", session="s0", author="extract"))
    lexicon = KoreaLexicon()
    expected = {s.item.id for s in workspace.store.iter_items() if lexicon.reasons(s.item)}
    tagged = {s.item.id for s in workspace.store.iter_items() if s.item.flags.korea_reasons}
    assert expected and tagged == expected and report.korea_tagged == len(expected)
    assert all(_stages(workspace, item_id)[-1] == ("tag-korea", "extract/tag-korea") for item_id in tagged)
