"""Dedup over a whole pool: exact duplicates across exams, answer conflicts, canonical answer
comparison, the precise preset and the dry run's ratio bands."""

from __future__ import annotations

import difflib
import json

import pytest

from curation.core.item import parse_item
from curation.core.workspace import open_workspace
from curation.steps.canonical import canonical_answer, canonical_item
from curation.steps.dedup import PRESETS, DedupConfig, dedup_items
from curation.steps.dedup_stage import run_dedup

from .conftest import run_cli

STEM = "콘크리트 압축강도 시험에서 공시체의 재하 속도로 옳은 것은?"
OPTIONS = ["0.2~0.3MPa/s", "0.6±0.2MPa/s", "1.0~1.5MPa/s", "2.5MPa/s"]
CLOSE = "콘크리트 공시체의 압축강도 시험에서 하중을 가하는 속도의 기준으로 옳은 것은?"  # 0.8-0.95 to the STEM item


def _item(item_id: str, exam: str = "건설안전기사", stem: str = STEM, options: list[str] = OPTIONS, answer: int = 2,
          session: str = "2020-1", status: str = "extracted"):
    return parse_item({"id": item_id, "source": {"exam": exam, "session": session}, "stem": stem,
                       "options": [{"text": text} for text in options], "answer": answer, "status": status})


def test_an_exact_duplicate_across_two_exams_is_removed_under_exam_scope(workspace):
    spaced = [o.replace("/", " / ") for o in OPTIONS]
    items = [_item("a", exam="건설안전산업기사", session="2021-2"), _item("b", session="2020-1", options=spaced),
             _item("other", stem="거푸집 동바리의 설치 기준으로 옳지 않은 것은?", options=["가", "나", "다", "라"])]
    assert canonical_item(items[0]) == canonical_item(items[1])  # equal after NFKC and whitespace folding
    workspace.store.save_items(items, author="t", stage="import")
    result, report, _ = run_dedup(workspace.store, DedupConfig(scope="exam"), author="dedup")
    assert result.excluded == {"a": ("b", 1, 1.0)}  # the earlier session is kept
    assert result.summary()["cross_scope_exact_excluded"] == 1
    assert workspace.store.get("a").item.status == "excluded"
    assert "exact duplicate of b in another scope" in workspace.store.history("a")[-1].reason
    assert workspace.store.get("b").item.status == workspace.store.get("other").item.status == "extracted"


def test_an_accepted_copy_is_kept_over_an_earlier_one(workspace):
    workspace.store.save_items([_item("early", exam="방재기사", session="2019-1"),
                                _item("reviewed", session="2023-2", status="accepted")], author="t", stage="import")
    result, _, _ = run_dedup(workspace.store, DedupConfig(), author="dedup")
    assert list(result.excluded) == ["early"] and result.excluded["early"][0] == "reviewed"


def test_an_identical_question_with_another_key_is_an_answer_conflict(workspace):
    workspace.store.save_items([_item("a", answer=2), _item("b", answer=3, session="2021-1"),
                                _item("c", exam="방재기사", answer=2, session="2022-1")], author="t", stage="import")
    result, _, _ = run_dedup(workspace.store, DedupConfig(), author="dedup")
    verdicts = {(p.first, p.second): p.verdict for p in result.pairs}
    assert verdicts[("a", "b")] == "answer_conflict" and verdicts[("a", "c")] == "merged"
    assert "a" not in result.excluded and "b" not in result.excluded and "c" in result.excluded
    for this, other in (("a", "b"), ("b", "a")):
        item = workspace.store.get(this).item
        assert item.status == "in_review"
        assert any(r.startswith(f"answer conflict with {other}") for r in item.flags.review_reasons)


@pytest.mark.parametrize(("mine", "theirs"), [("2.5MPa", "2.5 MPa"), ("2~5㎛", "2 ~ 5μm"), ("0.6±0.2MPa/s", "0.6 ± 0.2 MPa/s")])
def test_answers_equal_in_canonical_text_are_the_same_answer(mine, theirs):
    first = _item("a", options=[mine, "다른 보기 1", "다른 보기 2", "다른 보기 3"], answer=1)
    second = _item("b", options=["다른 보기 1", theirs, "다른 보기 2", "다른 보기 3"], answer=2, session="2021-1")
    assert canonical_answer(first) == canonical_answer(second)
    result = dedup_items([first, second], DedupConfig(require_same_answer=True))
    assert [(p.verdict, p.same_answer) for p in result.pairs] == [("merged", True)]


def _ratio(a, b) -> float:
    return difflib.SequenceMatcher(None, canonical_item(a), canonical_item(b)).ratio()


def test_the_precise_preset_merges_near_identical_text_or_close_text_with_one_answer():
    base = _item("a")
    close_same = _item("b", stem=CLOSE, session="2021-1")
    close_other = _item("c", stem=CLOSE, answer=3, session="2021-2")
    loose = _item("d", stem="콘크리트 휨강도 시험의 재하 방법과 지간 길이로 가장 옳은 것은?", session="2022-1",
                  options=["지간의 1/3", "0.06±0.04MPa/s", "1.0~1.5MPa/s", "2.5MPa/s"])
    assert 0.8 <= _ratio(base, close_same) < 0.95 and 0.6 <= _ratio(base, loose) < 0.8
    precise = DedupConfig(**PRESETS["precise"])  # type: ignore[arg-type]
    merged = {(p.first, p.second) for p in dedup_items([base, close_same, close_other, loose], precise).pairs
              if p.verdict == "merged"}
    assert ("a", "b") in merged and ("a", "c") not in merged and ("a", "d") not in merged
    default = {(p.first, p.second) for p in dedup_items([base, close_same, close_other, loose], DedupConfig(stem_gate=0)).pairs
               if p.verdict == "merged"}
    assert {("a", "b"), ("a", "c")} <= default


def test_dry_run_prints_ratio_bands_with_the_answer_share(tmp_path):
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    items = [_item("a"), _item("b", session="2021-1"), _item("c", stem=CLOSE, answer=3, session="2022-1")]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i.to_record(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    assert run_cli("items", "import", str(path), "-w", str(ws)).returncode == 0
    dry = run_cli("dedup", "--dry-run", "-w", str(ws))
    assert dry.returncode == 0, dry.stderr
    band = _ratio(items[0], items[2])
    low = f"{int(band * 10) / 10:.1f}-{int(band * 10) / 10 + 0.1:.1f}"
    lines = dry.stdout.splitlines()
    assert any(line.split()[:5] == [low, "2", "pairs,", "0", "same"] for line in lines), dry.stdout  # a-c, b-c
    assert any(line.split()[:5] == ["identical", "1", "pairs,", "1", "same"] for line in lines), dry.stdout
    as_json = json.loads(run_cli("dedup", "--dry-run", "--json", "-w", str(ws)).stdout)
    assert {b["band"]: b["pairs"] for b in as_json["bands"]}[low] == 2
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert stats["by_status"] == {"extracted": 3}  # a dry run writes nothing
    bad = run_cli("dedup", "--preset", "loose", "-w", str(ws))
    assert bad.returncode == 1 and "--preset 'loose'" in bad.stderr


def test_no_question_is_left_twice_in_the_real_pool(workspace, realdata):
    from collections import defaultdict

    from curation.core.revise import active_items
    from curation.importers import import_file

    for path in sorted((realdata / "qnet_csv").glob("*.csv")):
        import_file(path, workspace.store)
    result, _, _ = run_dedup(workspace.store, DedupConfig(scope="exam"), author="dedup")
    copies = defaultdict(list)
    for stored in active_items(workspace.store):
        copies[canonical_item(stored.item)].append(stored.item)
    left = [same for same in copies.values() if len(same) > 1]
    # only answer conflicts stay twice (the real files have some), both in review, each naming the other
    assert left
    for same in left:
        for item in same:
            assert item.status == "in_review"
            others = {other.id for other in same} - {item.id}
            assert any(r.startswith("answer conflict with") and r.split()[3] in others for r in item.flags.review_reasons)
    assert result.summary()["cross_scope_exact_excluded"] > 0  # the real files share questions across exams


# -- exact copies inside an answer conflict --------------------------------------------------------
FORMWORK = "거푸집 동바리의 수평 연결재 설치 간격 기준으로 옳은 것은?"
FORMWORK_OPTIONS = ["1m 이내", "2m 이내", "3m 이내", "4m 이내"]
# (id, stem, options, answer, session): a 3-copy cluster with keys 2, 2, 3 and a 4-copy one with keys 1, 4, 1, 4
COPIES = [("p1", STEM, OPTIONS, 2, "2020-1"), ("p2", STEM, OPTIONS, 2, "2021-1"), ("p3", STEM, OPTIONS, 3, "2022-1"),
          ("q1", FORMWORK, FORMWORK_OPTIONS, 1, "2020-1"), ("q2", FORMWORK, FORMWORK_OPTIONS, 4, "2020-2"),
          ("q3", FORMWORK, FORMWORK_OPTIONS, 1, "2021-1"), ("q4", FORMWORK, FORMWORK_OPTIONS, 4, "2022-1")]


def _expected_copies(rows) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(excluded copy -> the earliest copy with its text and key, in-review item -> its conflict partners)."""
    first: dict[tuple, str] = {}
    copy_of = {}
    for item_id, stem, options, answer, _ in sorted(rows, key=lambda row: row[4]):
        key = (stem, tuple(options), answer)
        if key in first:
            copy_of[item_id] = first[key]
        else:
            first[key] = item_id
    partners = {kept: {other for (stem, options, _), other in first.items() if (stem, options) == key[:2] and other != kept}
                for key, kept in first.items()}
    return copy_of, partners


def _import_rows(tmp_path, rows, status: str = "extracted"):
    return _import_items(tmp_path, [_item(item_id, stem=stem, options=options, answer=answer, session=session,
                                          status=status) for item_id, stem, options, answer, session in rows])


def _import_items(tmp_path, items):
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i.to_record(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    assert run_cli("items", "import", str(path), "-w", str(ws)).returncode == 0
    return ws


def _exported(ws) -> dict[str, dict]:
    export = run_cli("items", "export", "-w", str(ws))
    assert export.returncode == 0, export.stderr
    return {record["id"]: record for record in map(json.loads, export.stdout.splitlines())}


def test_an_exact_copy_with_the_same_key_is_excluded_inside_an_answer_conflict(tmp_path):
    ws = _import_rows(tmp_path, COPIES)
    copy_of, partners = _expected_copies(COPIES)
    assert copy_of == {"p2": "p1", "q3": "q1", "q4": "q2"} and partners["p1"] == {"p3"}  # the test's own reading
    done = run_cli("dedup", "--json", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["excluded"] == summary["exact_duplicates_excluded"] == len(copy_of)
    assert summary["answer_conflict_items"] == len(partners)

    items = _exported(ws)
    assert {i for i, r in items.items() if r["status"] == "excluded"} == set(copy_of)
    assert {i for i, r in items.items() if r["status"] == "in_review"} == set(partners)
    for kept, others in partners.items():
        named = {reason.split()[3] for reason in items[kept]["flags"]["review_reasons"]
                 if reason.startswith("answer conflict with")}
        assert named == others, (kept, items[kept]["flags"]["review_reasons"])  # never an excluded copy

    store = open_workspace(ws).store
    for copy, kept in copy_of.items():
        last = store.history(copy)[-1]
        assert last.stage == "dedup" and last.reason.startswith(f"exact duplicate of {kept} "), last.reason
    for kept in partners:
        assert store.history(kept)[-1].stage == "dedup"

    report = json.loads(max((ws / "runs").glob("dedup-*.json")).read_text(encoding="utf-8"))
    standing = {frozenset(conflict["items"]): conflict for conflict in report["answer_conflicts"]}
    assert set(standing) == {frozenset((kept, other)) for kept, others in partners.items() for other in others}
    assert [sorted(pair) for pair in standing[frozenset(("p1", "p3"))]["pairs"]] == [["p1", "p3"], ["p2", "p3"]]


def test_the_copy_kept_inside_an_answer_conflict_follows_the_cluster_rule():
    accepted = [_item("a", answer=2), _item("b", answer=2, session="2021-1", status="accepted"),
                _item("c", answer=3, session="2022-1")]
    result = dedup_items(accepted, DedupConfig())
    assert result.excluded == {"a": ("b", 1, 1.0)}  # accepted first, then the earliest
    assert list(result.standing_conflicts()) == [("b", "c")]


@pytest.mark.realdata
def test_no_two_active_real_items_are_exact_copies_with_one_key_in_an_exam(tmp_path, realdata):
    from collections import Counter

    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    csvs = sorted(str(path) for path in (realdata / "qnet_csv").glob("*.csv"))
    assert run_cli("items", "import", *csvs, "-w", str(ws)).returncode == 0
    done = run_cli("dedup", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    items = [parse_item(record) for record in _exported(ws).values()]
    assert len(items) == 1460
    active = [item for item in items if item.status in ("extracted", "in_review", "accepted")]
    copies = Counter((item.source.exam, canonical_item(item), canonical_answer(item)) for item in active)
    repeated = [key for key, n in copies.items() if n > 1]
    in_review = [item for item in active if item.status == "in_review"]
    print(f"\nreal pool: {len(in_review)} in review, {len(repeated)} groups of same-key exact copies left in an exam")
    assert not repeated
    assert in_review  # the real files hold answer conflicts (across exams), each side left in review


def _left_over(items) -> tuple[list[list[str]], list[str]]:
    """(groups of active same-key exact copies, active copies of a question with several keys not in
    review), read from the items as exported."""
    from collections import defaultdict

    by_text: dict[str, dict[tuple, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        if item.status in ("extracted", "in_review", "accepted"):
            by_text[canonical_item(item)][canonical_answer(item)].append(item.id)
    status = {item.id: item.status for item in items}
    copies = [ids for keys in by_text.values() for ids in keys.values() if len(ids) > 1]
    outside = [i for keys in by_text.values() if len(keys) > 1 for ids in keys.values() for i in ids
               if status[i] != "in_review"]
    return copies, outside


def _dedup_through_the_cli(tmp_path, items) -> dict[str, dict]:
    ws = _import_items(tmp_path, items)
    done = run_cli("dedup", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    return _exported(ws)


def _conflict_partners(record: dict) -> set[str]:
    return {reason.split()[3] for reason in record["flags"]["review_reasons"] if reason.startswith("answer conflict with")}


def test_copies_with_one_key_in_two_exams_collapse_when_the_first_copy_has_another_key(tmp_path):
    """The pool's first copy (key 2) in one exam, two copies with key 3 in two other exams: each
    key-3 copy conflicts with the first; they must still merge with each other."""
    items = [_item("a", exam="건설안전기사", answer=2, session="2020-1"),
             _item("b", exam="산업안전기사", answer=3, session="2021-1"),
             _item("c", exam="방재기사", answer=3, session="2022-1")]
    records = _dedup_through_the_cli(tmp_path, items)
    assert _left_over([parse_item(r) for r in records.values()]) == ([], [])
    assert records["c"]["status"] == "excluded" and records["a"]["status"] == records["b"]["status"] == "in_review"
    assert _conflict_partners(records["a"]) == {"b"} and _conflict_partners(records["b"]) == {"a"}


def test_an_accepted_copy_in_an_answer_conflict_carries_it_into_review(tmp_path):
    """An accepted copy ranks above the pool's first copy of its key, which alone was paired with the
    copy of another key (in another exam): the first copy goes, the accepted one carries the
    conflict and goes back to review."""
    items = [_item("a", answer=2, session="2020-1"), _item("b", answer=2, session="2021-1", status="accepted"),
             _item("c", exam="방재기사", answer=3, session="2022-1")]
    records = _dedup_through_the_cli(tmp_path, items)
    assert _left_over([parse_item(r) for r in records.values()]) == ([], [])
    assert records["a"]["status"] == "excluded" and records["b"]["status"] == records["c"]["status"] == "in_review"
    assert _conflict_partners(records["b"]) == {"c"} and _conflict_partners(records["c"]) == {"b"}
