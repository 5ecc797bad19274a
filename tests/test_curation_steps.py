import itertools
import re

import pytest

from curation.core.item import parse_item
from curation.steps.korea import KoreaLexicon, tag_korea, with_explicit_variant
from curation.steps.shuffle import original_order, shuffle_item
from curation.steps.taxonomy import tag_taxonomy
from curation.steps.terms import missing_terms
from scoring.keys import ChoiceKey

from .helpers import make_record


def _item(**change):
    record = make_record("k-1", answer=2) | change
    record["options"][1] = {"text": "정답 보기", "image": {"blob": "b" * 64 + ".png"}}
    return parse_item(record)


def test_shuffle_is_deterministic_answer_preserving_and_reversible():
    item = _item()
    first, again = shuffle_item(item, 7), shuffle_item(item, 7)
    assert first == again
    [moved], [key] = first.answer_list(), item.answer_list()
    assert first.options[moved - 1] == item.options[key - 1]  # image moved with its option
    assert first.answer == ChoiceKey(options=[moved])  # still a choice key
    assert sorted(first.original_option_order) == [1, 2, 3, 4]
    assert shuffle_item(first, 7) == first  # reshuffling starts from the source order
    assert original_order(first).options == item.options and original_order(first).answer == item.answer
    orders = {tuple(shuffle_item(item, seed).original_option_order) for seed in range(20)}
    assert len(orders) > 5  # seeds give different permutations


def test_shuffle_remaps_multi_answers():
    item = _item(answer=[1, 4])
    shuffled = shuffle_item(item, 3)
    assert sorted(shuffled.options[n - 1].text for n in shuffled.answer_list()) == sorted(
        item.options[n - 1].text for n in item.answer_list())


def test_shuffle_keeps_a_choice_keys_rule_and_leaves_other_keys_alone():
    every = _item(answer={"format": "choice", "options": [1, 4], "require_all": True})
    shuffled = shuffle_item(every, 3)
    assert shuffled.requires_all_answers() and len(shuffled.answer_list()) == 2
    assert parse_item(shuffled.to_record()) == shuffled  # a valid item
    assert original_order(shuffled) == every
    numeric = _item(answer={"format": "numeric", "value": "2.5", "unit": "hPa"})
    assert shuffle_item(numeric, 3).answer == numeric.answer


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
    # 우리나라 is absorbed by 장마's rewrite; 동해안 needs no second 한국
    ("우리나라 장마와 동해안 강설은?", "한국의 장마와 동해안 강설은?"),
    ("장마와 동해안 강설은?", "한국의 장마와 동해안 강설은?"),  # no country named: the first phrase names it
    ("한국 동해안의 기후는?", "한국 지역의 동해안의 기후는?"),
    ("우리나라 기후의 특징은?", "한국 기후의 특징은?"),
    ("우리나라, 일본의 마파람은?", "한국, 일본의 마파람은?"),  # Japan's 마파람 is not a Korean wind
    ("우리나라와 일본의 장마는?", "한국과 일본의 장마는?"),  # 와 after a vowel, 과 after 한국's ㄱ
    ("일본의 장마와 우리나라 장마의 차이는?", "일본의 장마와 한국의 장마의 차이는?"),
    ("우리나라로 들어오는 태풍은?", "한국으로 들어오는 태풍은?"),
    ("우리나라는 어느 기단의 영향을 받는가?", "한국은 어느 기단의 영향을 받는가?"),
    ("일본 동해안의 장마는?", "일본 동해안의 장마는?"),  # Japan's coast: nothing about Korea
    ("지균풍이 부는 조건은?", "지균풍이 부는 조건은?"),
])
def test_explicit_rewrites_read_as_korean(stem, expected):
    assert KoreaLexicon().explicit(stem) == expected


# the test's own view of the default rules: implicit phrases whose rewrite keeps the phrase once
_PHRASES = ("장마", "동해안", "서해안", "마파람", "높새바람", "영동 지방")
_COUNTRY_LEADS = ("", "우리나라 ", "우리나라의 ", "한국 ", "대한민국의 ", "우리나라는 ", "우리나라와 ", "우리나라로 ",
                  "우리나라가 ")
_PARTICLE_AFTER_KOREA = {"는": "은", "와": "과", "로": "으로", "가": "이"}  # 우리나라+X → 한국+Y
_FOREIGN = ("", "일본의 ", "중국 ")
_JOINERS = (", ", " 및 ", "에서 부는 ")


def _generated_stems():
    for lead, foreign, first, joiner, second in itertools.product(_COUNTRY_LEADS, _FOREIGN, _PHRASES, _JOINERS,
                                                                   ("", *_PHRASES)):
        if second != first:
            yield f"{lead}{foreign}{first}{joiner}{second}의 특징은?"


def test_explicit_rewrites_name_the_country_once_and_never_for_another_country():
    lexicon = KoreaLexicon()
    stems = list(_generated_stems())
    assert len(stems) == 9 * 3 * 6 * 3 * 6  # every combination but a phrase next to itself
    for stem in stems:
        out = lexicon.explicit(stem)
        named_in = stem.count("우리나라") + stem.count("한국")  # 대한민국 contains 한국
        foreign = [name for name in ("일본", "중국") if name in stem]
        korea_context = named_in or not foreign  # only a foreign-named text is left without 한국
        assert "우리나라" not in out, stem
        assert out.count("한국") == (named_in or (1 if korea_context else 0)), (stem, out)
        for phrase in _PHRASES:  # each rule applied once: the phrase kept, never rewritten inside a rewrite
            assert out.count(phrase) == stem.count(phrase), (stem, out)
        assert lexicon.explicit(out) == out, (stem, out)  # nothing left to apply
        for name in foreign:  # nothing attached to another country's name
            assert not re.search(rf"{name}(?:의)?\s*한국", out), (stem, out)
            attached = re.search(rf"{name}(?:의)?\s*(?:{'|'.join(_PHRASES)})", stem)
            assert attached[0] in out, (stem, out)
        for vowel_form, consonant_form in _PARTICLE_AFTER_KOREA.items():
            if stem.startswith(f"우리나라{vowel_form} "):
                assert out.startswith(f"한국{consonant_form} "), (stem, out)
        if not foreign and not named_in:
            assert out.startswith("한국"), (stem, out)  # the first phrase names the country


def test_korea_lexicon_finds_terms_and_proposes_explicit_variants():
    item = parse_item(make_record("k-2", stem="우리나라 동해안에서 봄철에 부는 마파람의 특징은?"))
    tagged = tag_korea(item, KoreaLexicon())
    assert {"lexicon: 우리나라 (stem)", "lexicon: 동해안 (stem)", "lexicon: 마파람 (stem)"} <= set(tagged.flags.korea_reasons)
    assert tagged.flags.korea_specific is None and "korea-specific candidate" in tagged.flags.review_reasons
    assert tag_korea(tagged, KoreaLexicon()) == tagged
    explicit = with_explicit_variant(tagged, KoreaLexicon())
    # 우리나라 is absorbed by the rewrite of 동해안, which names the country; 마파람 needs no second 한국
    assert explicit.explicit_variant == "한국 지역의 동해안에서 봄철에 부는 마파람의 특징은?"
    plain = parse_item(make_record("k-3", stem="지균풍이 부는 조건은?"))
    assert tag_korea(plain, KoreaLexicon()) == plain


def test_taxonomy_rules():
    item = tag_taxonomy(_item(stem="다음 일기도에서 저기압의 위치는?", source={"exam": "기상기사", "subject": "일기분석"}))
    assert item.taxonomy.subject == "일기분석" and item.taxonomy.question_format == "single_answer"
    assert item.taxonomy.visual_type == "map"
    accepted_both = tag_taxonomy(parse_item(make_record("m", answer=[1, 2])))  # two keys accepted for one answer
    assert accepted_both.taxonomy.question_format == "single_answer" and accepted_both.taxonomy.visual_type == "none"
    assert not accepted_both.requires_all_answers()
    choose_all = tag_taxonomy(parse_item(make_record("m2", answer=[1, 2], stem="옳은 것을 모두 고르시오.")))
    assert choose_all.taxonomy.question_format == "multiple_answers"
    # the format is scored as it always was: its key now requires every listed option
    assert choose_all.answer == ChoiceKey(options=[1, 2], require_all=True) and not choose_all.accepts(1)
    one_combination = tag_taxonomy(parse_item(make_record("m3", answer=2, stem="옳은 것을 <보기>에서 모두 고른 것은?")))
    assert one_combination.taxonomy.question_format == "single_answer"
