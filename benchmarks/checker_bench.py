"""Checker speed: responses scored per second, per answer format, on one core.

    ours      `scoring.portable.score_response(key, response)`: thinking split, final-answer
              extraction, the format's check (keys parsed once per distinct key: each run
              starts with every cache cleared)
    baseline  Math-Verify's own `verify(parse(gold), parse(response))` on the same pairs, the
              usual way it is called (gold parsed for every pair)

(a) the real KMMMU responses (../shared/realdata/kmmmu_judge/*.csv: 100 items x 4 models, keys
    by `guess_key` from each row's answer and question_type, NFC-normalised);
(b) 100,000 generated (key, response) pairs per format (seeded; 50 responses per key, as a run of
    50 models would score them), each with the outcome it should get.

"agreement": the share of the checker's decided verdicts (correct or wrong) that agree with the
outcome each generated pair should get, or, on the real responses, with the LLM judge's
`is_correct` in the CSV (the judge errs too: it calls some looping responses correct).

Medians of --runs (min-max in brackets); the baseline runs on --baseline-pairs pairs of each set.
Targets: choice, numeric, set and text >= 2,000 responses/s; expression at least Math-Verify's speed.

    python benchmarks/checker_bench.py [--quick] [--pairs 100000] [--runs 3] [--baseline-pairs 2000]
                                       [--skip-real] [--skip-baseline] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import random
import statistics
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scoring.portable import guess_key, options_in_text, score_response  # noqa: E402
from scoring.portable import mathverify as portable_mathverify  # noqa: E402
from scoring.portable.formats import expression as expression_format  # noqa: E402
from scoring.portable.formats import numeric as numeric_format  # noqa: E402

REALDATA_CANDIDATES = (REPO.parent / "shared" / "realdata", Path("/work/shared/realdata"))
FORMATS = ("choice", "numeric", "set", "text", "expression")
TARGETS = {"choice": 2000.0, "numeric": 2000.0, "set": 2000.0, "text": 2000.0}
Pair = tuple[dict[str, Any], str, list[str], str | None]  # key, response, options, expected outcome

SENTENCES = [
    "먼저 문제에서 주어진 조건을 정리한다.", "표의 값을 차례로 비교하면 다음과 같다.",
    "그림에서 두 물체의 운동 방향을 확인한다.", "에너지 보존 법칙을 적용하여 식을 세운다.",
    "단위를 모두 SI 단위로 바꾸어 계산한다.", "각 보기의 내용을 하나씩 검토한다.",
    "이 경우 비율은 전체의 절반보다 작다.", "계산 결과를 원래 식에 대입하여 검산한다.",
    "따라서 위의 가정이 성립함을 알 수 있다.", "Let us check the boundary conditions first.",
    "The ratio of the two quantities is then compared.", "농도와 부피의 곱으로 몰수를 구한다.",
    "$v^2 = v_0^2 + 2as$ 를 이용한다.", "이때 $F = ma$ 에서 가속도를 구할 수 있다.",
    "보기 ㄱ의 설명은 표의 2행과 일치한다.", "두 번째 조건에서 경우의 수가 줄어든다.",
]
TERMS = ["미토콘드리아", "엽록체", "리보솜", "골지체", "소포체", "핵인", "세포벽", "액포", "중심체", "리소좀",
         "광합성", "세포호흡", "삼투", "확산", "능동수송", "전사", "번역", "복제", "돌연변이", "자연선택",
         "대류권", "성층권", "중간권", "열권", "온난전선", "한랭전선", "저기압", "고기압", "편서풍", "무역풍",
         "mitochondria", "chloroplast", "ribosome", "hydrogen bonding", "ionic interaction", "van der Waals"]
JAMO = "ㄱㄴㄷㄹㅁ"
CIRCLED = "①②③④⑤"


def pin_one_core() -> str:
    """Run on one core (the figures are per core)."""
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned (no sched_setaffinity)"


def clear_caches() -> None:
    numeric_format.target.cache_clear()
    expression_format._gold.cache_clear()
    portable_mathverify._KEYS.clear()  # parse_key remembers successful parses only
    portable_mathverify.key_value.cache_clear()


def preamble(rng: random.Random) -> str:
    return "\n".join(rng.choice(SENTENCES) for _ in range(rng.randint(0, 24)))


def with_reasoning(rng: random.Random, final: str) -> str:
    text = preamble(rng)
    return f"{text}\n\n{final}" if text else final


# --- generated pairs ----------------------------------------------------------------------------

def gen_choice(rng: random.Random, n_keys: int) -> Iterable[Pair]:
    for _ in range(n_keys):
        n = rng.choice((4, 5))
        options = [f"{rng.choice(TERMS)} {index}형" for index in range(1, n + 1)]
        answer = rng.randint(1, n)
        key = {"format": "choice", "options": [answer], "require_all": False}
        for _ in range(50):
            chosen = answer if rng.random() < 0.5 else rng.choice([i for i in range(1, n + 1) if i != answer])
            form = rng.randrange(7)
            final = [f"정답: {CIRCLED[chosen - 1]}", f"따라서 정답은 {chosen}번입니다.", f'{{"정답": {chosen}}}',
                     f"\\boxed{{{chosen}}}", f"정답: {options[chosen - 1]}", f"Answer: {'ABCDE'[chosen - 1]}",
                     f"정답: {chosen}, {1 + chosen % n}"][form]
            expected = "correct" if chosen == answer and form != 6 else "wrong"
            yield key, with_reasoning(rng, final), options, expected


def _number(rng: random.Random) -> tuple[str, Fraction, bool]:
    """(as written, value, exact)"""
    kind = rng.randrange(5)
    if kind == 0:
        value = rng.randint(1, 5000)
        return str(value), Fraction(value), True
    if kind == 1:
        places = rng.randint(1, 3)
        value = Fraction(rng.randint(1, 99999), 10**places)
        return f"{float(value):.{places}f}", value, False
    if kind == 2:
        a, b = rng.randint(1, 30), rng.randint(2, 30)
        return f"{a}/{b}", Fraction(a, b), True
    if kind == 3:
        mantissa, exponent = Fraction(rng.randint(100, 999), 100), rng.randint(-9, -2)
        return f"{float(mantissa):.2f} \\times 10^{{{exponent}}}", mantissa * Fraction(10) ** exponent, False
    places = 2
    value = Fraction(rng.randint(1, 9999), 100)
    return f"{float(value):.{places}f}", value, False


def _number_reply(rng: random.Random, value: Fraction, exact: bool, written: str) -> str:
    form = rng.randrange(6)
    if form == 0:
        return written
    if form == 1 and value.denominator != 1 and exact:
        return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
    if form == 2 and exact and value.denominator == 1:
        return f"{value.numerator:,}"
    if form == 3 and not exact:
        return f"{float(value):.6g}e0" if "e" not in f"{float(value):.6g}" else f"{float(value):.6g}"
    if form == 4 and exact:
        return f"{float(value):.4f}" if value.denominator != 1 else f"{value.numerator}.0"
    return written


def gen_numeric(rng: random.Random, n_keys: int) -> Iterable[Pair]:
    units = [None, None, "m", "cm", "kg", "s", "mL", "%", "m/s", "J"]
    for _ in range(n_keys):
        written, value, exact = _number(rng)
        unit = rng.choice(units)
        key = {"format": "numeric", "value": written, "tolerance": None, "relative_tolerance": None, "unit": unit}
        for _ in range(50):
            right = rng.random() < 0.5
            if right:
                shown = _number_reply(rng, value, exact, written)
            else:  # another value, written like the key (a multiple that is never 1)
                wrong = value * rng.choice((Fraction(1, 2), Fraction(3, 4), Fraction(5, 4), Fraction(2), Fraction(7, 10)))
                shown = _number_reply(rng, wrong, True, f"{float(wrong):.6g}")
            suffix = f" {unit}" if unit and rng.random() < 0.6 else ""
            final = rng.choice((f"정답: {shown}{suffix}", f"따라서 답은 {shown}{suffix}이다.",
                                f"\\boxed{{{shown}}}{suffix}", f"최종 답: ${shown}${suffix}"))
            yield key, with_reasoning(rng, final), [], "correct" if right else "wrong"


def gen_set(rng: random.Random, n_keys: int) -> Iterable[Pair]:
    for _ in range(n_keys):
        members = sorted(rng.sample(JAMO[:4], rng.randint(1, 3)), key=JAMO.index)
        key = {"format": "set", "members": members}
        for _ in range(50):
            right = rng.random() < 0.5
            chosen = list(members) if right else sorted(rng.sample(JAMO[:4], rng.randint(1, 4)), key=JAMO.index)
            if not right and chosen == members:
                chosen = [letter for letter in JAMO[:4] if letter not in members][:1] or ["ㅁ"]
            rng.shuffle(chosen)
            joiner = rng.choice((", ", ",", "", " ", "과 ", " 및 "))
            listed = joiner.join(chosen) if joiner != "과 " else ("과 ".join(chosen))
            final = rng.choice((f"정답: {listed}", f"따라서 옳은 것은 ㄱ~ㄹ 중\n정답은 {listed}이다.",
                                f"\\boxed{{{listed}}}", json.dumps({"정답": chosen}, ensure_ascii=False)))
            yield key, with_reasoning(rng, final), [], "correct" if sorted(chosen) == sorted(members) else "wrong"


def gen_text(rng: random.Random, n_keys: int) -> Iterable[Pair]:
    for _ in range(n_keys):
        answer = rng.choice(TERMS)
        key = {"format": "text", "accepted": [answer], "normalise": "default", "strict": True}
        for _ in range(50):
            right = rng.random() < 0.5
            said = answer if right else rng.choice([term for term in TERMS if term != answer])
            said = rng.choice((said, said.upper(), f"**{said}**", said.replace("", " ").strip() if len(said) < 6
                               else said))
            final = rng.choice((f"정답: {said}", f"정답은 {said}입니다.", f"\\boxed{{{said}}}", f"Answer: {said}"))
            yield key, with_reasoning(rng, final), [], "correct" if right else "wrong"


def _expression(rng: random.Random) -> tuple[str, list[str], list[str]]:
    """(key LaTeX, equivalent forms, different forms)"""
    a, b, c = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 7)
    kind = rng.randrange(6)
    if kind == 0:
        return (f"\\frac{{{a}}}{{\\sqrt{{{c}}}}}", [f"\\frac{{{a}\\sqrt{{{c}}}}}{{{c}}}", f"\\frac{{{a}}}{{\\sqrt{{{c}}}}}"],
                [f"\\frac{{{a + 1}}}{{\\sqrt{{{c}}}}}", f"\\frac{{{a}\\sqrt{{{c}}}}}{{{c + 1}}}"])
    if kind == 1:
        return (f"\\sqrt{{{a}gh}}", [f"\\sqrt{{{a}hg}}", f"\\sqrt{{{a}gh}}", f"\\sqrt{{{a} g h}}"],
                [f"\\sqrt{{{a + 1}gh}}", f"\\sqrt{{{a}g}}"])
    if kind == 2:
        return (f"(x+{a})^2", [f"x^2+{2 * a}x+{a * a}", f"(x+{a})^{{2}}"], [f"x^2+{a * a}", f"(x-{a})^2"])
    if kind == 3:
        return (f"\\frac{{{a}}}{{{a + b}}}", [f"{a}/{a + b}", f"\\frac{{{a}}}{{{a + b}}}"],
                [f"\\frac{{{a + 1}}}{{{a + b}}}", f"{b}/{a + b + 1}"])
    if kind == 4:
        return (f"{a}\\sqrt{{{c}}}", [f"\\sqrt{{{a * a * c}}}", f"{a}\\sqrt{{{c}}}"], [f"{a + 1}\\sqrt{{{c}}}"])
    return (f"\\frac{{{a}\\pi}}{{{b}}}", [f"\\frac{{{a}}}{{{b}}}\\pi", f"\\frac{{{a}\\pi}}{{{b}}}"],
            [f"\\frac{{{a + 1}\\pi}}{{{b}}}"])


def gen_expression(rng: random.Random, n_keys: int) -> Iterable[Pair]:
    for _ in range(n_keys):
        latex, same, different = _expression(rng)
        key = {"format": "expression", "latex": latex}
        for _ in range(50):
            right = rng.random() < 0.5
            said = rng.choice(same if right else different)
            final = rng.choice((f"\\boxed{{{said}}}", f"정답: ${said}$", f"최종 답: $v = {said}$"))
            yield key, with_reasoning(rng, final), [], "correct" if right else "wrong"


GENERATORS: dict[str, Callable[[random.Random, int], Iterable[Pair]]] = {
    "choice": gen_choice, "numeric": gen_numeric, "set": gen_set, "text": gen_text, "expression": gen_expression,
}


def generated(fmt: str, pairs: int, seed: int) -> list[Pair]:
    rng = random.Random(f"{seed}-{fmt}")
    found: list[Pair] = []
    for pair in GENERATORS[fmt](rng, pairs // 50 + 1):
        found.append(pair)
        if len(found) == pairs:
            break
    return found


# --- real pairs ---------------------------------------------------------------------------------

def real_pairs() -> dict[str, list[Pair]] | None:
    folder = next((path / "kmmmu_judge" for path in REALDATA_CANDIDATES if (path / "kmmmu_judge").is_dir()), None)
    if folder is None:
        return None
    by_format: dict[str, list[Pair]] = {}
    for path in sorted(folder.glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                def nfc(name: str, row: dict[str, str] = row) -> str:
                    return unicodedata.normalize("NFC", row.get(name) or "")
                options = options_in_text(nfc("question"))
                key = guess_key(nfc("answer"), nfc("question_type"), len(options))
                judged = "correct" if nfc("is_correct").strip().lower() == "true" else "wrong"
                by_format.setdefault(key["format"], []).append((key, nfc("response"), options, judged))
    return by_format


# --- timing -------------------------------------------------------------------------------------

def warm_up() -> None:
    """Imports and first calls (Math-Verify, sympy, regex compilation) before any timing."""
    score_response({"format": "expression", "latex": "(x+1)^2"}, "\\boxed{x^2+2x+1}")
    score_response({"format": "numeric", "value": "\\frac{4}{\\sqrt{7}}"}, "\\boxed{\\frac{4\\sqrt{7}}{7}}")
    try:
        from math_verify import parse, verify

        verify(parse("$x^2$"), parse("$x \\cdot x$"))
    except ImportError:
        pass


def time_ours(pairs: list[Pair], runs: int) -> tuple[list[float], Counter[str], float | None]:
    rates: list[float] = []
    outcomes: Counter[str] = Counter()
    agreement: float | None = None
    for run in range(runs):
        clear_caches()
        verdicts = []
        started = time.perf_counter()
        for key, response, options, _expected in pairs:
            verdicts.append(score_response(key, response, options=options).outcome)
        rates.append(len(pairs) / (time.perf_counter() - started))
        if run == 0:
            outcomes = Counter(verdicts)
            # with the outcome each pair should get (generated) or the LLM judge's verdict (real):
            # the share of the checker's decided verdicts (correct or wrong) that agree
            compared = [(v, pair[3]) for v, pair in zip(verdicts, pairs, strict=True)
                        if pair[3] is not None and v in ("correct", "wrong")]
            if compared:
                agreement = sum(v == e for v, e in compared) / len(compared)
    return rates, outcomes, agreement


def time_baseline(pairs: list[Pair], runs: int) -> list[float] | None:
    try:
        from math_verify import parse, verify
    except ImportError:
        return None
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    rates = []
    for _ in range(runs):
        started = time.perf_counter()
        for key, response, _options, _expected in pairs:
            gold = key.get("latex") or key.get("value") or key.get("members") or key.get("accepted") or \
                key.get("options") or key.get("reference") or ""
            gold_text = ", ".join(map(str, gold)) if isinstance(gold, list) else str(gold)
            verify(parse(f"${gold_text}$"), parse(response))
        rates.append(len(pairs) / (time.perf_counter() - started))
    return rates


def summary(rates: list[float]) -> str:
    return f"{statistics.median(rates):>9,.0f}/s [{min(rates):,.0f}-{max(rates):,.0f}]"


def bench(name: str, sets: dict[str, list[Pair]], runs: int, baseline_pairs: int, skip_baseline: bool,
          report: dict[str, Any]) -> None:
    print()
    print(f"{'format':<11}{'pairs':>8}  {'ours (median [min-max])':<30}{'Math-Verify':<28}{'ratio':>8}  "
          f"{'agreement':>9}  outcomes")
    for fmt, pairs in sets.items():
        rates, outcomes, agreement = time_ours(pairs, runs)
        base = None if skip_baseline else time_baseline(pairs[:baseline_pairs], runs)
        ours = statistics.median(rates)
        theirs = statistics.median(base) if base else None
        ratio = f"{ours / theirs:>7.1f}x" if theirs else "      -"
        target = TARGETS.get(fmt, theirs)
        mark = "" if target is None else ("  ok" if ours >= target else "  BELOW TARGET")
        agreed = f"{agreement:>9.1%}" if agreement is not None else "        -"
        shown = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        print(f"{fmt:<11}{len(pairs):>8,}  {summary(rates):<30}{summary(base) if base else '-':<28}{ratio}  "
              f"{agreed}  {shown}{mark}")
        report[name][fmt] = {"pairs": len(pairs), "ours_per_s": ours, "ours_runs": rates,
                             "math_verify_per_s": theirs, "math_verify_runs": base,
                             "math_verify_pairs": min(len(pairs), baseline_pairs) if base else 0,
                             "agreement": agreement, "outcomes": dict(outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10,000 pairs per format, 300 baseline pairs")
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-pairs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.baseline_pairs = min(args.pairs, 10_000), min(args.baseline_pairs, 300)
    print(f"checker bench: {pin_one_core()}; Python {sys.version.split()[0]}; runs {args.runs}")
    warm_up()
    report: dict[str, Any] = {"real": {}, "generated": {}}
    if not args.skip_real:
        real = real_pairs()
        if real is None:
            print("\n(a) real KMMMU responses: ../shared/realdata/kmmmu_judge is not present; skipped")
        else:
            ordered = {fmt: real[fmt] for fmt in sorted(real, key=lambda f: (f not in FORMATS, f))}
            report["real"] = {}
            print("\n(a) the real KMMMU responses (100 items x 4 models, keys by guess_key)", end="")
            bench("real", ordered, max(args.runs, 5), args.baseline_pairs, args.skip_baseline, report)
    sets = {fmt: generated(fmt, args.pairs, args.seed) for fmt in FORMATS}
    print(f"\n(b) {args.pairs:,} generated pairs per format (seed {args.seed}; 50 responses per key)", end="")
    bench("generated", sets, args.runs, args.baseline_pairs, args.skip_baseline, report)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
