import json

import pytest

from curation.importers import export_jsonl, import_file
from scoring.keys import ChoiceKey

from .helpers import make_record


def test_qnet_csv_imports_100_real_items(workspace, realdata):
    report = import_file(realdata / "qnet_csv" / "disaster-prev-2021-2.csv", workspace.store, blobs=workspace.blobs)
    assert report.ok, report.errors
    assert (report.format, report.rows, report.created) == ("qnet", 100, 100)
    first = workspace.store.get("방재기사-2021-2-재난관리-001").item
    assert first.source.number == 1 and first.source.subject == "재난관리"
    assert len(first.options) == 4 and first.answer == ChoiceKey(options=[2])
    again = import_file(realdata / "qnet_csv" / "disaster-prev-2021-2.csv", workspace.store)
    assert again.unchanged == 100 and again.created == 0


def test_every_real_qnet_file_imports(workspace, realdata):
    files = sorted((realdata / "qnet_csv").glob("*.csv"))
    reports = [import_file(path, workspace.store) for path in files]
    assert all(report.ok for report in reports), [(r.path, r.errors[:2]) for r in reports if not r.ok]
    assert sum(report.created for report in reports) == workspace.store.count() == 1460


def test_kmmlu_json_imports_200_real_items(workspace, realdata):
    report = import_file(realdata / "kmmlu" / "kmmlu_criminal_law_test_200.json", workspace.store)
    assert report.ok, report.errors
    assert (report.format, report.created) == ("kmmlu", 200)
    item = next(workspace.store.iter_items()).item
    assert len(item.options) == 4 and item.answer_format == "choice" and 1 <= item.answer_list()[0] <= 4
    assert "Human Accuracy" in item.extra


def test_korhist_json_imports_questions_with_images(workspace, realdata):
    report = import_file(realdata / "korhist77" / "questions_77.json", workspace.store, blobs=workspace.blobs)
    # Five source rows lost or merged option markers in the parser that made the file: they
    # are reported, never imported with options shifted under the key.
    assert [e.row for e in report.errors] == [4, 8, 13, 18, 41]
    assert all("expected ① to" in e.reason or "is not an option number" in e.reason for e in report.errors)
    assert report.created == 45
    with_images = [s.item for s in workspace.store.iter_items() if s.item.images]
    assert with_images and all(workspace.blobs.exists(i.images[0].blob) for i in with_images)
    assert all(len(s.item.options) == 5 and s.item.answer for s in workspace.store.iter_items())


def test_cp949_and_bom_files_are_decoded(workspace, tmp_path):
    header = "Test Name,Year,Session,Subject,Number,Question,Question_image,Option 1,Option 2,Option 3,Option 4,Answer\n"
    row = "기상기사,2020,1,기상학개론,1,해륙풍에 대한 설명으로 옳은 것은?,,낮에 해풍,밤에 해풍,항상 육풍,무풍,①\n"
    cp949 = tmp_path / "cp949.csv"
    cp949.write_bytes((header + row).encode("cp949"))
    bom = tmp_path / "bom.csv"
    bom.write_bytes((header + row.replace(",1,해륙풍", ",2,해륙풍")).encode("utf-8-sig"))
    for path in (cp949, bom):
        report = import_file(path, workspace.store)
        assert report.ok and report.created == 1, report.errors
    item = workspace.store.get("기상기사-2020-1-기상학개론-001").item
    assert item.stem.startswith("해륙풍") and item.answer == ChoiceKey(options=[1])


def test_bad_rows_are_reported_and_the_rest_import(workspace, tmp_path):
    lines = [
        json.dumps(make_record("ok-1")),
        "{not json",
        json.dumps(make_record("bad-answer", answer=7)),
        json.dumps(make_record("ok-2")),
        json.dumps(make_record("ok-1")),
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.created == 2 and not report.ok
    assert [(e.row, e.reason.split(":")[0]) for e in report.errors] == [
        (2, "not JSON"), (3, "item 'bad-answer'"), (5, "item id 'ok-1' already used by row 1")]
    assert "answer 7 is not an option number 1..4" in report.errors[1].reason


def test_a_file_that_is_not_text_is_refused_whole(workspace, tmp_path):
    path = tmp_path / "binary.csv"
    path.write_bytes(b"\xff\xfe\x00\x81\x82" * 50)
    report = import_file(path, workspace.store)
    assert report.fatal and "not UTF-8 or CP949" in report.fatal


def test_csv_with_other_column_names_needs_a_map(workspace, tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("시험,Year,Session,Subject,Number,문제,Question_image,Option 1,Option 2,Option 3,Option 4,정답\n"
                    "기상기사,2019,1,기후학,3,쾨펜 기후 구분의 기준은?,,기온과 강수,바람,기압,일사,1\n", encoding="utf-8")
    assert "missing columns" in import_file(path, workspace.store).fatal
    report = import_file(path, workspace.store, column_map={"Test Name": "시험", "Question": "문제", "Answer": "정답"})
    assert report.ok and report.created == 1


def test_export_then_import_gives_identical_items(workspace, realdata, tmp_path):
    from curation.core.workspace import init_workspace

    import_file(realdata / "kmmlu" / "kmmlu_criminal_law_test_200.json", workspace.store)
    import_file(realdata / "qnet_csv" / "ergonomics-2022-1.csv", workspace.store)
    exported = tmp_path / "export.jsonl"
    with exported.open("w", encoding="utf-8") as handle:
        assert export_jsonl(workspace.store, handle) == 280
    other = init_workspace(tmp_path / "other")
    report = import_file(exported, other.store)
    assert report.ok and report.created == 280
    before = {s.item.id: s.item for s in workspace.store.iter_items()}
    after = {s.item.id: s.item for s in other.store.iter_items()}
    assert before == after
    again = tmp_path / "again.jsonl"
    with again.open("w", encoding="utf-8") as handle:
        export_jsonl(other.store, handle)
    assert again.read_bytes() == exported.read_bytes()


@pytest.mark.parametrize("answer", ["③", "3", "C", "3번"])
def test_answer_forms_in_csv(workspace, tmp_path, answer):
    path = tmp_path / "a.csv"
    path.write_text("question,A,B,C,D,answer\n질문?,가,나,다,라," + answer + "\n", encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.ok, report.errors
    assert next(workspace.store.iter_items()).item.answer == ChoiceKey(options=[3])


def test_reimport_never_undoes_later_edits_unless_forced(workspace, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(make_record("q-1")) + "\n", encoding="utf-8")
    import_file(path, workspace.store)
    workspace.store.update_fields("q-1", {"answer": 3}, expect_rev=1, author="alice", stage="edit")
    again = import_file(path, workspace.store)
    assert (again.skipped, again.updated) == (1, 0)
    assert workspace.store.get("q-1").item.answer == ChoiceKey(options=[3])
    forced = import_file(path, workspace.store, force=True)
    assert forced.updated == 1 and workspace.store.get("q-1").item.answer == ChoiceKey(options=[1])
    assert [r.stage for r in workspace.store.history("q-1")] == ["import", "edit", "import"]


def test_a_kmmmu_question_that_carries_its_options_is_a_choice_item_whatever_its_type(workspace, tmp_path):
    """KMMMU's `question_type` says 객관식 for most multiple-choice rows, but a row typed 주관식 whose
    question ends with numbered options and whose key is one of their numbers asks to choose too."""
    import csv

    rows = [
        {"": "1", "question": "다음 빈칸에 알맞은 말은?\n1) 건조 - 습윤\n2) 습윤 - 건조\n3) 고온 - 저온\n4) 저온 - 고온",
         "answer": "2", "question_type": "주관식(텍스트)"},
        {"": "2", "question": "다음 순서대로 계산하시오.\n1) 3을 더한다\n2) 2를 곱한다", "answer": "14",
         "question_type": "주관식(수치/계산형)"},
        {"": "3", "question": "옳은 것은?\n선택지:\n(1) 가\n(2) 나\n(3) 다", "answer": "3", "question_type": "객관식(단일정답)"},
    ]
    path = tmp_path / "kmmmu.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["", "question", "answer", "question_type", "image_link"])
        writer.writeheader()
        writer.writerows(rows)
    report = import_file(path, workspace.store)
    assert report.ok and report.format == "kmmmu", report.errors
    typed_open = workspace.store.get("1").item
    assert typed_open.answer == ChoiceKey(options=[2]) and [o.text for o in typed_open.options][1] == "습윤 - 건조"
    assert typed_open.stem == "다음 빈칸에 알맞은 말은?" and typed_open.taxonomy.question_format == "single_answer"
    steps = workspace.store.get("2").item  # 14 is no option number: an open question, its lines kept
    assert steps.answer_format == "numeric" and steps.options == [] and steps.stem.endswith("2) 2를 곱한다")
    assert steps.taxonomy.question_format == "numeric"
    chosen = workspace.store.get("3").item
    assert chosen.answer == ChoiceKey(options=[3]) and len(chosen.options) == 3 and chosen.stem == "옳은 것은?"
