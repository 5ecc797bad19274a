"""Files as users have them: no header row, a Markdown fence, garbled exam names and text,
a second section numbered from 1 again; and fixing a pool's exam names afterwards."""

from __future__ import annotations

import csv
import io
import json

import pytest

from curation.exam_names import similar_names
from curation.import_command import summary_line
from curation.importers import QNET_COLUMNS, import_file

from .conftest import run_cli


def _rows(exam: str, count: int, start: int = 1, subject: str = "안전관리론") -> list[list[str]]:
    return [[exam, "2021", "2", subject, str(n), f"{subject} {n}번: 다음 중 안전 관리 조치 {n * 37 % 101}로 옳은 것은?", "",
             f"조치 {n}가", f"조치 {n}나", f"조치 {n}다", f"조치 {n}라", str(n % 4 + 1)] for n in range(start, start + count)]


def _csv(rows: list[list[str]], header: bool = True) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(QNET_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()


def _ids(workspace) -> list[str]:
    return sorted(workspace.store.ids())


def test_a_headerless_csv_imports_like_one_with_a_header(workspace, tmp_path):
    rows = _rows("건설안전기사", 5)
    for folder, header in (("with", True), ("without", False)):  # one file name: the items' origin
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "exam.csv").write_text(_csv(rows, header=header), encoding="utf-8")
    headed = import_file(tmp_path / "with" / "exam.csv", workspace.store)
    bare = import_file(tmp_path / "without" / "exam.csv", workspace.store)
    assert headed.ok and headed.created == 5
    assert bare.ok and bare.format == "qnet" and (bare.rows, bare.unchanged, bare.created) == (5, 5, 0)
    assert any("no header row" in note for note in bare.notes)
    assert "imported 2 of 2 files (qnet; 1 without a header row): 10 rows, 5 new, 0 updated, 5 unchanged" \
        in summary_line([headed, bare])


def test_a_headerless_file_of_another_shape_is_still_refused(workspace, tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("가,나,다\n1,2,3\n", encoding="utf-8")
    assert "missing columns" in import_file(path, workspace.store).fatal


def test_a_csv_in_a_code_fence_imports(workspace, tmp_path, realdata):
    real = (realdata / "qnet_csv" / "ergonomics-2022-1.csv").read_text(encoding="utf-8-sig")
    path = tmp_path / "pasted.csv"
    path.write_text("\n```csv\n" + real.rstrip("\n") + "\n```\n", encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.ok and report.created == len(list(csv.DictReader(io.StringIO(real)))) == 80
    assert any("code fence" in note for note in report.notes)


def test_one_exam_name_per_file_with_the_variants_reported(workspace, tmp_path):
    rows = _rows("건설안전기사", 6)
    rows[1][0], rows[3][0], rows[4][0] = "건 '설안전기사", "건 건설안전기사\"", ""
    path = tmp_path / "names.csv"
    path.write_text(_csv(rows), encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.ok and report.created == 6
    assert report.exam_variants == {"건설안전기사": 3, "건 '설안전기사": 1, "건 건설안전기사\"": 1, "": 1}
    assert {s.item.source.exam for s in workspace.store.iter_items()} == {"건설안전기사"}
    assert all(item_id.startswith("건설안전기사-") for item_id in _ids(workspace))
    chosen = import_file(path, workspace.store, exam="건설안전산업기사")
    assert chosen.created == 6 and not chosen.exam_variants


def test_garbled_rows_go_to_review_and_are_counted(workspace, tmp_path):
    rows = _rows("방재기사", 4)
    rows[1][5] = "1ȸ �߰� 다음 중 옳은 것은?"
    rows[2][8] = "Ã¬Â¡Â°ì¹˜"
    path = tmp_path / "garbled.csv"
    path.write_text(_csv(rows), encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.ok and report.created == 4 and report.garbled == 2
    items = {s.item.source.number: s.item for s in workspace.store.iter_items()}
    assert [items[n].status for n in (1, 2, 3, 4)] == ["extracted", "in_review", "in_review", "extracted"]
    assert "U+FFFD" in items[2].flags.review_reasons[0] and "option 2" in items[3].flags.review_reasons[0]
    assert not items[1].flags.review_reasons


@pytest.mark.parametrize("text", ["Δp = ρgh 에서 σ와 μ의 단위는? (㎛, ㎫, ℃, ×10⁻³)", "Müller 법칙의 적용으로 옳은 것은?"])
def test_greek_units_and_one_accented_name_are_not_garbled(text):
    from curation.garbled import garbled_reason

    assert garbled_reason(text) is None


def test_a_second_section_numbered_from_one_imports_with_stable_ids(workspace, tmp_path):
    rows = _rows("국가9급", 3) + [[*row[:5], row[5] + " (2과목)", *row[6:]] for row in _rows("국가9급", 3)]
    path = tmp_path / "sections.csv"
    path.write_text(_csv(rows), encoding="utf-8")
    report = import_file(path, workspace.store)
    assert report.ok and report.created == 6
    ids = _ids(workspace)
    assert [i for i in ids if i.endswith("-s2")] == [f"국가9급-2021-2-안전관리론-00{n}-s2" for n in (1, 2, 3)]
    assert workspace.store.get("국가9급-2021-2-안전관리론-001-s2").item.stem.endswith("(2과목)")
    again = import_file(path, workspace.store)
    assert (again.unchanged, again.created) == (6, 0)
    assert "(qnet; 1 with a repeated numbering): 6 rows, 6 new" in summary_line([report])


def test_an_id_suffix_keeps_two_alike_files_apart(workspace, tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(_csv(_rows("방재기사", 2)), encoding="utf-8")
    second.write_text(_csv([[*r[:5], r[5] + " 변형", *r[6:]] for r in _rows("방재기사", 2)]), encoding="utf-8")
    assert import_file(first, workspace.store).created == 2
    assert import_file(second, workspace.store).skipped == 2
    assert import_file(second, workspace.store, id_suffix="b").created == 2
    assert "방재기사-2021-2-안전관리론-001-b" in _ids(workspace)


def test_similar_exam_names_group_but_distinct_exams_do_not():
    counts = {"건설안전기사": 6832, "건 '설안전기사": 1, "건  설안전산업기사": 1, "건설안전산업기사": 900,
              "설안전기사": 2, "unknown": 3, "방재기사": 500}
    groups = dict(similar_names(counts))
    assert sorted(groups["건설안전기사"]) == ["건 '설안전기사", "설안전기사"]
    assert groups["건설안전산업기사"] == ["건  설안전산업기사"]
    assert set(groups) == {"건설안전기사", "건설안전산업기사"}


def test_stats_lists_likely_same_exams_and_rename_exam_merges_them(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    lines = [json.dumps({"id": f"q{n}", "source": {"exam": exam}, "stem": f"문제 {n}?",
                         "options": [{"text": "가"}, {"text": "나"}], "answer": 1})
             for n, exam in enumerate(["건설안전기사"] * 3 + ["건 설안전기사"])]
    (tmp_path / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = run_cli("items", "import", str(tmp_path / "items.jsonl"), "-w", str(ws))
    assert imported.returncode == 0 and "imported 1 of 1 files (jsonl): 4 rows, 4 new" in imported.stdout
    stats = run_cli("items", "stats", "-w", str(ws))
    assert "likely the same exam as '건설안전기사' (3): '건 설안전기사' (1)" in stats.stdout
    renamed = run_cli("items", "rename-exam", "건 설안전기사", "건설안전기사", "-w", str(ws))
    assert renamed.returncode == 0 and "1 revised" in renamed.stdout, renamed.stderr
    after = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert after["by_exam"] == {"건설안전기사": 4} and after["similar_exam_names"] == []
    history = json.loads(run_cli("items", "show", "q3", "--history", "--json", "-w", str(ws)).stdout)["history"]
    assert [r["stage"] for r in history] == ["import", "rename-exam"]
    missing = run_cli("items", "rename-exam", "없는시험", "X", "-w", str(ws))
    assert missing.returncode == 1 and "no item has exam '없는시험'" in missing.stderr
