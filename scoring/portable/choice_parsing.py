"""From a model's raw text to the option number(s) it chose, or None (stdlib-only: copied into releases).

Order: thinking blocks are split off (kept, not discarded); then JSON (fenced or bare,
single quotes tolerated); then Korean and English answer statements ("정답: ③",
"정답은 3번입니다", "답: 3", "Answer: C", "3번이 정답"), the last one stated winning; then a
reply that is nothing but an option ("(3)", "③"). A candidate the text rejects ("3번이
아니라", "3번은 정답이 아니다") is never returned, and nothing outside 1..n is.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

_TWO_DIGITS = re.compile(r"\d{1,2}")
_LETTER = re.compile(r"[A-E]")
_LIST_COMMA = re.compile(r"[,、]")
_LIST_SPLIT = re.compile(r"\s*[,、]\s*")

ANSWER_KEYS = ("정답", "최종_정답", "최종정답", "답", "answer", "final_answer", "Answer", "정답_번호", "choice")
RATIONALE_KEYS = ("생성된_추론_근거", "추론_근거", "근거", "해설", "풀이", "rationale", "reasoning", "explanation")

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.I)
_THINK_CLOSE_ONLY = re.compile(r"^(.*?)</(think|thinking|reasoning)>", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)

# After NFKC (① → 1, （ → (, ： → :, Ａ → A) and with markdown emphasis removed.
_UNIT = r"(?:개|명|년|월|일|시|분|초|회|점|배|권|원|%|kg|cm|mm|km|m\b)"


def _num(group: str) -> str:
    """One option token, captured as digits (group) or a letter A-E (group + "L")."""
    digits = rf"(?P<{group}>\d{{1,2}})(?![\d]|[.,]\d|\s*{_UNIT})"
    letter = rf"(?P<{group}L>[A-E])(?![A-Za-z]|-[A-Za-z])"  # not a word's first letter (C-SCAN, B-tree)
    return rf"[(\[]?\s*(?:{digits}|{letter})\s*[)\]]?(?:\s*번)?"


_NUMS = rf"{_num('n1')}(?:\s*(?:,|및|와|과|and)\s*{_num('n2')})?(?:\s*(?:,|및|와|과|and)\s*{_num('n3')})?"
_KEY = r"(?:최종\s*)?(?:정\s*답|(?<![가-힣])답(?![변장])|final\s+answer|(?:correct\s+)?answer|the\s+answer\s+is)"
_SEP = r"\s*(?:은|는|이|:|=|is|-|→|->)?\s*:?\s*"
_GOOD = (r"(?:올바른|옳은|맞는|적절한|알맞은|correct|right)\s*(?:선택지|보기|것|항목|번호|설명|option|choice)"
         r"\s*(?:은|는|이|is|:)?\s*:?\s*")
_REJECT_AFTER = re.compile(
    r"^\s*(?:번)?\s*(?:은|는|이|가)?\s*(?:정답이?\s*|답이?\s*)?"
    r"(?:아니|아닙|아님|아닌|틀리|틀렸|틀린|옳지\s*않|맞지\s*않|오답|is\s+not|isn't|is\s+wrong|is\s+incorrect|is\s+false)",
    re.I,
)

# (tier, regex): a higher tier wins; within a tier the last statement in the text wins.
_PATTERNS: list[tuple[int, re.Pattern[str]]] = [
    (3, re.compile(rf"{_KEY}{_SEP}{_NUMS}", re.I)),
    (3, re.compile(rf"아니(?:라|고)\s*,?\s*{_NUMS}", re.I)),
    (2, re.compile(rf"{_NUMS}\s*(?:이|가)?\s*(?:정답|답)(?:이다|입니다|이에요|임|\b)", re.I)),
    (2, re.compile(rf"{_GOOD}{_NUMS}", re.I)),
    (1, re.compile(rf"(?:option|choice|선택지|보기)\s*{_NUMS}\s*(?:이|가)?\s*(?:맞|옳|correct)", re.I)),
]
# Where each pattern can match: every match holds one of its anchor's words, so a long reply is
# searched only in windows around those words (`_windows`), not character by character.
_ANSWER_WORDS = ("답", "answer")
_ANCHORS: list[tuple[tuple[str, ...], int, int]] = [
    (_ANSWER_WORDS, 24, 120),  # "최종 정답: …", "the answer is …": the key just before, the options after
    (("아니",), 0, 240),
    (("답",), 160, 8),  # "… 3번이 정답입니다": the options before, a few letters after
    (("올바른", "옳은", "맞는", "적절한", "알맞은", "correct", "right"), 0, 240),
    (("option", "choice", "선택지", "보기"), 0, 240),
]
_JSON_KEY = re.compile(r"[\"']\s*(?:" + "|".join(re.escape(key) for key in ANSWER_KEYS) + r")\s*[\"']|\\u", re.I)
_BARE = re.compile(rf"^\s*(?:{_KEY}{_SEP})?{_NUMS}\s*[.。!]?\s*$", re.I)
_REFUSAL = re.compile(
    r"(죄송하지만|답변(?:을|해)?\s*드릴\s*수\s*없|도와\s*드릴\s*수\s*없|답할\s*수\s*없|응답할\s*수\s*없|"
    r"I\s+can(?:'|no)t\s+(?:help|assist|answer)|I'm\s+sorry,?\s+but|I\s+cannot\s+provide)",
    re.I,
)


@dataclass(frozen=True)
class Parsed:
    answer: int | list[int] | None
    method: str | None  # json | text | bare | None
    visible: str  # the text without thinking blocks
    thinking: str | None
    rationale: str | None = None
    truncated: bool = False  # a thinking block was opened and never closed
    refusal: bool = False


def split_thinking(raw: str) -> tuple[str, str | None, bool]:
    """(visible text, thinking text or None, truncated)."""
    lowered = raw.lower()
    if len(lowered) == len(raw) and "think" not in lowered and "reasoning" not in lowered:
        return raw.strip(), None, False  # no tag can be there: skip the scans
    thoughts = [match.group(2).strip() for match in _THINK_BLOCK.finditer(raw)]
    visible = _THINK_BLOCK.sub("", raw)
    truncated = False
    orphan_close = _THINK_CLOSE_ONLY.match(visible)
    if orphan_close and not _THINK_OPEN.search(orphan_close.group(1)):
        # templates that open the block themselves: everything before </think> is thinking
        thoughts.insert(0, orphan_close.group(1).strip())
        visible = visible[orphan_close.end():]
    opened = _THINK_OPEN.search(visible)
    if opened:
        thoughts.append(visible[opened.end():].strip())
        visible = visible[: opened.start()]
        truncated = True
    thinking = "\n\n".join(t for t in thoughts if t) or None
    return visible.strip(), thinking, truncated


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return text.replace("**", "").replace("__", "")


def to_option(value: Any, n_options: int) -> int | None:
    """One option number from a JSON value or token: 3, "3", "③", "3번", "(3)", "C"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        token = _normalise(value).strip().strip("()[]. ").removesuffix("번").strip()
        if _TWO_DIGITS.fullmatch(token):
            number = int(token)
        elif _LETTER.fullmatch(token):
            number = ord(token) - ord("A") + 1
        else:
            return None
    else:
        return None
    return number if 1 <= number <= n_options else None


def _answer_value(value: Any, n_options: int) -> int | list[int] | None:
    if isinstance(value, list):
        numbers = [to_option(v, n_options) for v in value]
        valid = [number for number in numbers if number is not None]
        if not valid or len(valid) != len(numbers):
            return None
        unique = sorted(set(valid))
        return unique[0] if len(unique) == 1 else unique
    if isinstance(value, str) and _LIST_COMMA.search(value):
        return _answer_value(_LIST_SPLIT.split(value.strip()), n_options)
    return to_option(value, n_options)


def json_objects(text: str) -> list[str]:
    """Fenced blocks first, then every balanced {...} in the text, in order."""
    found = [block.strip() for block in _FENCE.findall(text)]
    depth, start, quote, escaped = 0, -1, "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and depth > 0:
            quote = char
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : index + 1])
    return found


def load_object(candidate: str) -> dict[str, Any] | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _from_json(text: str, n_options: int) -> tuple[int | list[int] | None, str | None, bool]:
    """(answer, rationale, saw an answer key) from the last JSON object that has an answer key."""
    if "{" not in text or not _JSON_KEY.search(text):
        return None, None, False  # no quoted answer key anywhere: no object can have one
    for candidate in reversed(json_objects(text)):
        data = load_object(candidate)
        if data is None:
            continue
        keys = {str(k).strip(): v for k, v in data.items()}
        key = next((k for k in ANSWER_KEYS if k in keys), None)
        if key is None:
            continue
        rationale_key = next((k for k in RATIONALE_KEYS if k in keys), None)
        rationale = str(keys[rationale_key]) if rationale_key and keys[rationale_key] is not None else None
        return _answer_value(keys[key], n_options), rationale, True
    return None, None, False


def _numbers(match: re.Match[str], n_options: int) -> int | list[int] | None:
    numbers = []
    for group in ("n1", "n2", "n3"):
        digit, letter = match.group(group), match.group(f"{group}L")
        if digit is None and letter is None:
            continue
        number = to_option(digit if digit is not None else letter, n_options)
        if number is None:
            return None
        numbers.append(number)
    if not numbers:
        return None
    unique = sorted(set(numbers))
    return unique[0] if len(unique) == 1 else unique


def word_windows(text: str, words: tuple[str, ...], before: int, after: int,
                 lowered: str | None = None) -> list[tuple[int, int]]:
    """Merged (start, end) ranges around every occurrence of the words (ASCII words in any
    case): where a pattern holding one of them can match. Found with `str.find`, which is
    many times faster than a regular expression scanning every character."""
    if lowered is None:
        lowered = text.lower()
    if len(lowered) != len(text):  # a rare character whose lower case is longer: search the text as it is
        lowered = text
    spots: list[int] = []
    for word in words:
        index = lowered.find(word)
        while index >= 0:
            spots.append(index)
            index = lowered.find(word, index + 1)
    spots.sort()
    ranges: list[tuple[int, int]] = []
    for spot in spots:
        start, end = max(0, spot - before), min(len(text), spot + 8 + after)
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return ranges


def _matches(text: str, index: int, lowered: str) -> list[re.Match[str]]:
    _tier, pattern = _PATTERNS[index]
    words, before, after = _ANCHORS[index]
    if len(text) <= 2 * (before + after):
        return list(pattern.finditer(text))
    return [match for start, end in word_windows(text, words, before, after, lowered)
            for match in pattern.finditer(text, start, end)]


def _candidates(text: str, n_options: int) -> list[tuple[int, int, int | list[int]]]:
    """(tier, position, answer) of every answer statement the text does not reject."""
    found = []
    lowered = text.lower()
    for index, (tier, _pattern) in enumerate(_PATTERNS):
        for match in _matches(text, index, lowered):
            if _REJECT_AFTER.match(text[match.end() : match.end() + 24]):
                continue
            answer = _numbers(match, n_options)
            if answer is not None:
                found.append((tier, match.start(), answer))
    return found


def _from_text(text: str, n_options: int) -> int | list[int] | None:
    found = _candidates(text, n_options)
    return max(found, key=lambda candidate: candidate[:2])[2] if found else None


def stated_options(text: str, n_options: int) -> set[tuple[int, ...]]:
    """Every different answer the text states (answer statements and JSON answers, thinking
    included), each as a tuple of option numbers: a text that states two has not settled."""
    text = _normalise(text)
    found = {(answer,) if isinstance(answer, int) else tuple(answer) for _, _, answer in _candidates(text, n_options)}
    if "{" in text and _JSON_KEY.search(text):
        for candidate in json_objects(text):
            data = load_object(candidate)
            key = next((k for k in ANSWER_KEYS if data is not None and k in data), None)
            value = _answer_value(data[key], n_options) if data is not None and key is not None else None
            if value is not None:
                found.add((value,) if isinstance(value, int) else tuple(value))
    return found


_REFUSAL_WORDS = ("죄송", "드릴", "답할", "can", "sorry")


def looks_like_refusal(text: str) -> bool:
    normalised = _normalise(text)
    if len(normalised) <= 600:
        return bool(_REFUSAL.search(normalised))
    # a long reply: only around the words every refusal phrase holds
    return any(_REFUSAL.search(normalised, start, end)
               for start, end in word_windows(normalised, _REFUSAL_WORDS, 40, 80))


def parse_response(raw: str, n_options: int) -> Parsed:
    visible, thinking, truncated = split_thinking(raw or "")
    answer, rationale, had_key = _from_json(visible, n_options)
    if answer is not None:
        return Parsed(answer, "json", visible, thinking, rationale, truncated)
    text = _normalise(visible)
    answer = _from_text(text, n_options)
    method: str | None = "text"
    if answer is None:
        bare = _BARE.match(text)
        answer, method = (_numbers(bare, n_options), "bare") if bare else (None, None)
    refusal = answer is None and not had_key and bool(_REFUSAL.search(text))
    return Parsed(answer, method if answer is not None else None, visible, thinking, rationale, truncated, refusal)
