import pytest

from curation.item import parse_item
from curation.steps.korea import KoreaLexicon, tag_korea, with_explicit_variant
from curation.steps.shuffle import original_order, shuffle_item
from curation.steps.taxonomy import tag_taxonomy
from curation.steps.terms import missing_terms

from .helpers import make_record


def _item(**change):
    record = make_record("k-1", answer=2) | change
    record["options"][1] = {"text": "정답 보기", "image": {"blob": "b" * 64 + ".png"}}
    return parse_item(record)


def test_shuffle_is_deterministic_answer_preserving_and_reversible():
    item = _item()
    first, again = shuffle_item(item, 7), shuffle_item(item, 7)
    assert first == again
    assert first.options[first.answer - 1] == item.options[item.answer - 1]  # image moved with its option
    assert sorted(first.original_option_order) == [1, 2, 3, 4]
    assert shuffle_item(first, 7) == first  # reshuffling starts from the source order
    assert original_order(first).options == item.options and original_order(first).answer == item.answer
    orders = {tuple(shuffle_item(item, seed).original_option_order) for seed in range(20)}
    assert len(orders) > 5  # seeds give different permutations


def test_shuffle_remaps_multi_answers():
    item = _item(answer=[1, 4])
    shuffled = shuffle_item(item, 3)
    assert sorted(shuffled.options[n - 1].text for n in shuffled.answer) == sorted(
        item.options[n - 1].text for n in item.answer)


def test_term_check_rejects_a_dropped_number_or_unit():
    original = r"850 hPa 등압면의 온위가 300 K이고 \(10^{-5}\,\mathrm{s^{-1}}\)의 발산이 있을 때 옳은 것은?"
    kept = r"온위가 300 K이고 850 hPa 등압면에 \(10^{-5}\,\mathrm{s^{-1}}\)의 발산이 있다면 맞는 것은?"
    assert missing_terms(original, kept) == []
    assert "850hPa" in missing_terms(original, kept.replace("850 hPa", "850"))
    assert "300K" in missing_terms(original, kept.replace("300 K", "300"))
    assert any(t.startswith("\\(") for t in missing_terms(original, kept.replace(r"\(10^{-5}\,\mathrm{s^{-1}}\)", "작은 값")))
    assert "온위" in missing_terms(original, kept.replace("온위", "온도"))


@pytest.mark.parametrize(("stem", "expected"), [
    ("우리나라의 장마 기간은?", "한국의 장마 기간은?"),
    ("우리나라 장마와 동해안 강설은?", "한국의 장마와 한국 지역의 동해안 강설은?"),
    ("한국 동해안의 기후는?", "한국 지역의 동해안의 기후는?"),
    ("우리나라 기후의 특징은?", "한국 기후의 특징은?"),
    ("우리나라, 일본의 마파람은?", "한국, 일본의 한국 지역의 지방풍인 마파람은?"),
])
def test_explicit_rewrites_never_name_the_country_twice(stem, expected):
    assert KoreaLexicon().explicit(stem) == expected


def test_korea_lexicon_finds_terms_and_proposes_explicit_variants():
    item = parse_item(make_record("k-2", stem="우리나라 동해안에서 봄철에 부는 마파람의 특징은?"))
    tagged = tag_korea(item, KoreaLexicon())
    assert {"lexicon: 우리나라 (stem)", "lexicon: 동해안 (stem)", "lexicon: 마파람 (stem)"} <= set(tagged.flags.korea_reasons)
    assert tagged.flags.korea_specific is None and "korea-specific candidate" in tagged.flags.review_reasons
    assert tag_korea(tagged, KoreaLexicon()) == tagged
    explicit = with_explicit_variant(tagged, KoreaLexicon())
    # 우리나라 is absorbed by the rewrite of 동해안 that already names the country
    assert explicit.explicit_variant == "한국 지역의 동해안에서 봄철에 부는 한국 지역의 지방풍인 마파람의 특징은?"
    plain = parse_item(make_record("k-3", stem="지균풍이 부는 조건은?"))
    assert tag_korea(plain, KoreaLexicon()) == plain


def test_taxonomy_rules():
    item = tag_taxonomy(_item(stem="다음 일기도에서 저기압의 위치는?", source={"exam": "기상기사", "subject": "일기분석"}))
    assert item.taxonomy.subject == "일기분석" and item.taxonomy.question_format == "single_answer"
    assert item.taxonomy.visual_type == "map"
    accepted_both = tag_taxonomy(parse_item(make_record("m", answer=[1, 2])))  # two keys accepted for one answer
    assert accepted_both.taxonomy.question_format == "single_answer" and accepted_both.taxonomy.visual_type == "none"
    choose_all = tag_taxonomy(parse_item(make_record("m2", answer=[1, 2], stem="옳은 것을 모두 고르시오.")))
    assert choose_all.taxonomy.question_format == "multiple_answers"
    one_combination = tag_taxonomy(parse_item(make_record("m3", answer=2, stem="옳은 것을 <보기>에서 모두 고른 것은?")))
    assert one_combination.taxonomy.question_format == "single_answer"
