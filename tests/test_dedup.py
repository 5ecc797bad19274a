import difflib
import re
import unicodedata

import pytest
from rapidfuzz import fuzz

from curation.core.item import parse_item
from curation.importers import import_file
from curation.steps.antonyms import AntonymLexicon
from curation.steps.dedup import DedupConfig, dedup_items
from curation.steps.dedup_stage import run_dedup

from .conftest import run_cli
from .helpers import make_record

STEM = "대기 중에서 기온이 고도에 따라 증가하는 기층을 무엇이라 하는가?"
OPTIONS = ["역전층", "혼합층", "대류권계면", "성층권"]


def _item(item_id, stem=STEM, options=OPTIONS, answer=1, session="2020-1", status="extracted"):
    record = make_record(item_id, stem=stem, answer=answer, session=session)
    record["options"] = [{"text": text} for text in options]
    record["status"] = status
    return parse_item(record)


def _verdicts(result):
    return {(pair.first, pair.second): pair.verdict for pair in result.pairs}


def test_permuted_options_are_caught():
    permuted = ["성층권", "역전층", "대류권계면", "혼합층"]
    result = dedup_items([_item("a"), _item("b", options=[f"① {o}" for o in permuted], answer=2, session="2021-1")],
                         DedupConfig())
    assert _verdicts(result) == {("a", "b"): "merged"}
    assert result.excluded == {"b": ("a", 1, pytest.approx(1.0))}


def test_same_options_under_a_new_stem_are_kept():
    other = "다음 중 기온이 고도와 관계없이 일정한 기층의 이름으로 알맞은 것은?"
    result = dedup_items([_item("a"), _item("b", stem=other)], DedupConfig())
    assert _verdicts(result) == {("a", "b"): "stem_gate"} and not result.excluded
    bare = dedup_items([_item("a"), _item("b", stem=other)], DedupConfig(stem_gate=0))
    assert _verdicts(bare) == {("a", "b"): "merged"}


def test_an_antonym_pair_is_queued_not_removed(workspace):
    inverted = STEM.replace("증가", "감소")
    workspace.store.save_items([_item("a"), _item("b", stem=inverted)], author="t", stage="import")
    result, report, _ = run_dedup(workspace.store, DedupConfig(), author="dedup")
    assert _verdicts(result) == {("a", "b"): "inverted"}
    for item_id in ("a", "b"):
        item = workspace.store.get(item_id).item
        assert item.status == "extracted"
        assert any("inverted-logic pair" in reason and "증가/감소" in reason for reason in item.flags.review_reasons)


def test_negation_is_an_inversion():
    lexicon = AntonymLexicon()
    assert lexicon.swaps("해당하는 것은?", "해당하지 않는 것은?")
    assert lexicon.swaps("포화 상태", "불포화 상태") == [("포화", "불포화")]
    assert lexicon.swaps("가장 높은 것은?", "가장 높은 것은?") == []


def test_keep_rule_prefers_accepted_then_earliest_and_writes_revisions(workspace):
    items = [_item("late", session="2022-1", status="accepted"), _item("early", session="2019-1"),
             _item("mid", session="2020-2")]
    workspace.store.save_items(items, author="t", stage="import")
    result, report, path = run_dedup(workspace.store, DedupConfig(), author="dedup", report_dir=workspace.runs_dir)
    assert result.clusters == [["late", "early", "mid"]]
    assert sorted(report.changed) == ["early", "mid"]
    excluded = workspace.store.get("early")
    assert excluded.item.status == "excluded"
    assert "exact duplicate of late" in workspace.store.history("early")[-1].reason
    assert path.is_file()
    again, report2, _ = run_dedup(workspace.store, DedupConfig(), author="dedup")
    assert again.pool == 1 and not report2.changed  # idempotent


def test_dry_run_writes_nothing(workspace):
    workspace.store.save_items([_item("a"), _item("b", session="2021-1")], author="t", stage="import")
    run_dedup(workspace.store, DedupConfig(), author="dedup", dry_run=True)
    assert workspace.store.get("b").rev == 1


def test_an_edit_made_meanwhile_is_not_overwritten(workspace, monkeypatch):
    import curation.steps.dedup_stage as stage

    workspace.store.save_items([_item("a"), _item("b", session="2021-1")], author="t", stage="import")
    real = stage.dedup_items

    def edit_during_dedup(items, config, antonyms=None, advance=None):
        workspace.store.update_fields("b", {"stem": STEM + " (수정)"}, expect_rev=1, author="alice", stage="edit")
        return real(items, config, antonyms, advance)

    monkeypatch.setattr(stage, "dedup_items", edit_during_dedup)
    _, report, _ = run_dedup(workspace.store, DedupConfig(), author="dedup")
    assert report.conflicts == ["b"]
    assert workspace.store.get("b").item.stem.endswith("(수정)") and workspace.store.get("b").item.status == "extracted"


def _reference_text(item) -> str:
    """The canonical text as documented: NFKC, circled numbers, option markers and whitespace
    dropped, the options sorted (an image option by its blob hash)."""
    def fold(text: str) -> str:
        return re.sub(r"\s+", "", unicodedata.normalize("NFKC", re.sub("[①-⑳❶-❿]", " ", text)))

    def option_text(option) -> str:
        text = re.sub(r"^\s*(?:\(?\d{1,2}[.)]|\(?[가-하][.)]|\(?[A-Ea-e][.)])\s*", "",
                      unicodedata.normalize("NFKC", re.sub("[①-⑳❶-❿]", " ", option.text)))
        return fold(text) or (option.image.blob[:16] if option.image else "")

    return fold(item.stem) + "|" + "|".join(sorted(option_text(o) for o in item.options))


def _pool_order(items):
    return sorted(items, key=lambda i: (i.source.session or "", i.source.exam, i.source.number or 0, i.id))


def _brute_force_pairs(items, similar, scope_of=lambda item: "") -> set[tuple[str, str]]:
    """Every ordered pair (earlier, later in pool order) of one scope whose texts are `similar`."""
    ordered = _pool_order(items)
    texts = {item.id: _reference_text(item) for item in ordered}
    return {(a.id, b.id) for k, a in enumerate(ordered) for b in ordered[k + 1 :]
            if scope_of(a) == scope_of(b) and similar(texts[a.id], texts[b.id])}


def _difflib_similar(a: str, b: str, threshold: float = 0.6) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b)  # its two upper bounds first: all-pairs stays affordable
    return matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold and matcher.ratio() >= threshold


@pytest.mark.parametrize("scope", ["exam", "all"])
def test_difflib_method_equals_all_pairs_difflib_on_real_qnet_items(workspace, realdata, scope):
    for path in sorted((realdata / "qnet_csv").glob("*.csv")):
        import_file(path, workspace.store)
    items = [stored.item for stored in workspace.store.iter_items()]
    if scope == "all":  # all-pairs over 1,460 items is slow in pure difflib: take two exams
        items = [i for i in items if i.source.exam in ("방재기사", "인간공학기사")]
    result = dedup_items(items, DedupConfig(scope=scope, stem_gate=0))
    expected = _brute_force_pairs(items, _difflib_similar, (lambda i: i.source.exam) if scope == "exam" else (lambda i: ""))
    assert expected, "the real pool has near-duplicates"
    assert {(pair.first, pair.second) for pair in result.pairs if not pair.cross_scope} == expected


@pytest.mark.parametrize(("method", "similar"), [("fuzz", lambda a, b: fuzz.ratio(a, b) >= 60),
                                                 ("lsh", _difflib_similar)])
def test_fuzz_and_lsh_methods_find_exactly_the_similar_pairs(method, similar):
    # thirty questions that differ only in a number and their options' numbers: each pair is similar
    items = [_item(f"x{n:02d}", stem=f"{n}번째 서로 다른 질문: 구름의 종류 {n * 7919 % 1000}는 무엇인가?",
                   options=[f"답 {n}-{k}" for k in range(4)]) for n in range(30)]
    items += [_item("dup", stem=STEM), _item("dup2", options=list(reversed(OPTIONS)), answer=4, session="2023-1")]
    # an unrelated question (shares no wording) must pair with nothing
    items.append(_item("other", stem="복사 평형 온도를 구하는 식에 쓰이는 상수는?", options=["슈테판-볼츠만 상수", "플랑크 상수",
                                                                                  "보일 상수", "아보가드로수"]))
    expected = _brute_force_pairs(items, similar)
    x_pairs = {(f"x{m:02d}", f"x{n:02d}") for m in range(30) for n in range(m + 1, 30)}
    assert expected == x_pairs | {("dup", "dup2")}  # the fixture is what it says: 435 + 1 pairs
    result = dedup_items(items, DedupConfig(method=method))
    assert {(p.first, p.second) for p in result.pairs} == expected
    assert next(p.verdict for p in result.pairs if (p.first, p.second) == ("dup", "dup2")) == "merged"


@pytest.mark.parametrize("option", [["--method", "closest"], ["--scope", "planet"]])
def test_unknown_method_or_scope_is_one_line(workspace, option):
    result = run_cli("dedup", "-w", str(workspace.root), *option)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--method is difflib|fuzz|lsh and --scope is exam|subject|all" in lines[0], result.stderr
