"""The final answer an open-answer response states (stdlib-only: copied into releases).

Thinking blocks are split off before this runs (`scorer.score_response`). What counts as a
stated final answer, every kind located by its position in the text and **the last one stated
winning**:

- `\\boxed{...}` (also `\\fbox{...}`), braces nested to any depth: `\\boxed{\\frac{1}{2}}` gives
  `\\frac{1}{2}`;
- an answer statement: `정답: …`, `정답은 … 이다/입니다`, `답: …`, `최종 답: …`, `최종 정답은 …`,
  `최종 답변: …`, `Answer: …`, `Final answer: …`, `The answer is …` (markdown emphasis ignored),
  also as a heading on its own line (`### 최종 답변`, `**정답**`) with the answer below. The statement's
  content is the rest of its line; a statement whose line ends there (`정답:` then a list, or
  `정답은 다음과 같다.`) takes the lines that follow, up to a blank line (a blank line followed by
  a labelled line such as `(2) …` continues the block). A boxed answer inside a statement is read
  as the boxed answer. Korean endings (`이다`, `입니다`, `임` …) and a closing period are dropped;
- a JSON object (fenced or bare) with an answer key (`정답`, `answer`, … `choice_parsing.ANSWER_KEYS`);
- failing all of these, a concluding sentence on the response's last line: `따라서`/`그러므로`/
  `결론적으로`/`결국`/`즉`/`Therefore`… then `… X은/는 ANSWER입니다/이다.` (`따라서 옳지 않은 것은
  ㄷ, ㅁ입니다.`, `따라서 사각형은 모두 3개입니다.`): the answer is what follows the sentence's last
  topic (`…은`/`…는`), without the copula;
- failing that too, a reply that is nothing but the answer (at most 200 characters on at most 3
  lines).

Statements are looked for only around the words `답` and `answer` (found with `str.find`), so a
reply of 18,000 characters costs little more than a short one.

A response that **loops** (its tail is one chunk of at least 10 characters repeated at least 5
times, over at least 500 characters) is read only up to where the loop starts: a loop that never
committed to an answer before it began yields None (`unparseable`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from .choice_parsing import ANSWER_KEYS, RATIONALE_KEYS, json_objects, load_object, word_windows

_HEADING_MARK = re.compile(r"(?m)^\s{0,3}#{1,6}\s+")
_LEADING_LABEL = re.compile(r"^\s*(?:[(\[]\s*(?:\d{1,2}|[a-zA-Z]|[가-하])\s*[)\]]|(?:\d{1,2}|[a-zA-Z])\s*\)|[A-Za-z]\s*[:：])\s*")

MAX_BLOCK = 2000  # characters a multi-line statement takes at most
BARE_MAX_CHARS = 200
BARE_MAX_LINES = 3
LOOP_MIN_PERIOD = 10
LOOP_MIN_REPEATS = 5
LOOP_MIN_SPAN = 500
LOOP_MAX_PERIOD = 4000

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_KEY = (r"(?:최종\s*(?:정\s*답|답\s*변|답안|답)|정\s*답|(?<![가-힣])답안?)(?![가-힣]*\s*(?:해설|풀이|근거))"
        r"|final\s+answer|(?<![a-z])answer|the\s+(?:final\s+|correct\s+)?answer\s+is")
# a statement: key, separator (은/는/:/=/is/→), content to the end of the line
_STATEMENT = re.compile(
    rf"(?P<key>{_KEY})[ \t]*(?:(?P<word>은|는)(?![가-힣])|[:：=]|is\b|→|->)[ \t]*:?(?P<content>[^\n]*)",
    re.I,
)
# a heading that is only the key ("### 최종 답변", "**정답**"): the lines after it are the answer
_HEADING = re.compile(rf"(?m)^[ \t>#✅*-]*(?:{_KEY})[ \t]*[:：]?[ \t]*$", re.I)
_FOLLOWS = re.compile(r"^(?:다음과\s*같|아래와\s*같|as\s+follows|following)", re.I)
_LABEL_LINE = re.compile(r"^\s*(?:[(\[]?\s*(?:\d{1,2}|[a-zA-Z]|[가-하])\s*[)\].:]|[-•*·]\s|[①-⑳])")
_ENDING = re.compile(
    r"\s*(?:(?:이|가)?\s*(?:정답|답)\s*)?"
    r"(?:입니다|이다|이에요|예요|임|라고\s*할\s*수\s*있다|가\s*된다|이\s*된다|됩니다|된다|이\s*됩니다|입니다만)?"
    r"\s*[.。!]?\s*$"
)
_JSON_HINT = re.compile(r"[{,]\s*['\"](?:" + "|".join(re.escape(k) for k in ANSWER_KEYS) + r")['\"]\s*:", re.I)
_MATH_WRAP = re.compile(r"^\s*(?:\$\$(?P<a>.*)\$\$|\$(?P<b>.*)\$|\\\((?P<c>.*)\\\)|\\\[(?P<d>.*)\\\])\s*$", re.S)

_TEXTCIRCLED = re.compile(r"\$?\\textcircled\s*\{\s*(\d{1,2}|[ㄱ-ㅎ])\s*\}\$?")
# Hangul conjoining initial consonants (what NFKC makes of ㄱ, ㉠ …) back to compatibility jamo
_CHOSEONG = "ᄀᄁᄂᄃᄄᄅᄆᄇᄈᄉᄊᄋᄌᄍᄎᄏᄐᄑᄒ"
_COMPAT = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_FOLD_JAMO = str.maketrans(_CHOSEONG, _COMPAT)


@dataclass(frozen=True)
class Stated:
    """A final answer as the response states it: the text, how it was found, where it starts."""

    text: str
    method: str  # boxed | statement | json | bare | tail
    position: int
    rationale: str | None = None
    raw: Any = None  # the JSON value, when method is json
    full: str = ""  # the statement as written (Korean endings kept), for a judge to read


def nfkc(text: str) -> str:
    """NFKC (full-width forms, ①, ㎜ folded; LaTeX `\\textcircled{2}` read as 2) with ㄱㄴㄷ kept
    as the compatibility jamo they are written with (NFKC alone turns ㄱ and ㉠ into conjoining
    jamo)."""
    if "textcircled" in text:
        text = _TEXTCIRCLED.sub(r"\1", text)
    return unicodedata.normalize("NFKC", text).translate(_FOLD_JAMO)


def strip_emphasis(text: str) -> str:
    """Markdown bold/italic/code markers and heading marks removed (LaTeX left alone)."""
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return _HEADING_MARK.sub("", text)


def unwrap_math(text: str) -> str:
    """`$x$`, `$$x$$`, `\\(x\\)`, `\\[x\\]` → `x` (only when the whole text is wrapped)."""
    match = _MATH_WRAP.match(text)
    if not match:
        return text.strip()
    inner = next(group for group in match.groups() if group is not None)
    return inner.strip() if "$" not in inner else text.strip()


def boxed_all(text: str) -> list[tuple[int, str]]:
    """Every `\\boxed{...}` (and `\\fbox{...}`) with its position; nested braces are matched,
    escaped `\\{` `\\}` are content. An unclosed box is skipped."""
    found: list[tuple[int, str]] = []
    for match in _BOXED.finditer(text):
        depth, index, end = 1, match.end(), len(text)
        while index < end:
            char = text[index]
            if char == "\\":
                index += 2
                continue
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    found.append((match.start(), text[match.end():index].strip()))
                    break
            index += 1
    return found


def last_boxed(text: str) -> str | None:
    boxes = boxed_all(text)
    return boxes[-1][1] if boxes else None


def loop_start(text: str) -> int | None:
    """Where a looping tail begins (the first copy of the repeated chunk), or None."""
    found = loop_span(text)
    return found[0] if found else None


def loop_span(text: str) -> tuple[int, int] | None:
    """(where a looping tail begins, the length of the chunk it repeats), or None.

    Checked from the end: the last 32 characters' earlier occurrences give candidate periods; a
    period p is a loop when the last max(5p, 500) characters equal themselves shifted by p."""
    n = len(text)
    if n < LOOP_MIN_SPAN + LOOP_MIN_PERIOD:
        return None
    probe = text[-32:]
    search_end = n - 1
    for _ in range(8):
        pos = text.rfind(probe, max(0, n - 32 - LOOP_MAX_PERIOD), search_end)
        if pos < 0:
            return None
        period = n - 32 - pos
        search_end = pos + 31
        if period < LOOP_MIN_PERIOD:
            continue
        span = max(LOOP_MIN_REPEATS * period, LOOP_MIN_SPAN)
        if span + period > n or text[n - span:] != text[n - span - period:n - period]:
            continue
        start = n - span - period  # text[i] == text[i + period] from here to the end
        while start - period >= 0 and text[start - period:start] == text[start:start + period]:
            start -= period
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        return start, period
    return None


def _tidy(content: str) -> str:
    content = content.strip().strip("*_").strip()
    trimmed = _ENDING.sub("", content) if len(content) < 400 else content
    return (trimmed or content).strip()


def _block_after(text: str, start: int) -> str:
    """The lines after a statement that ends its line: up to a blank line, unless the next line
    after the blank one is labelled ((2) …, b) …, - …)."""
    lines = text[start:].split("\n")
    taken: list[str] = []
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    size = 0
    while index < len(lines) and size < MAX_BLOCK:
        line = lines[index]
        if not line.strip():
            nxt = index + 1
            while nxt < len(lines) and not lines[nxt].strip():
                nxt += 1
            if nxt < len(lines) and _LABEL_LINE.match(lines[nxt]) and taken and _LABEL_LINE.match(taken[0]):
                index = nxt
                continue
            break
        taken.append(line.rstrip())
        size += len(line) + 1
        index += 1
    return "\n".join(taken)[:MAX_BLOCK].strip()


def _key_matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """`pattern` (a key, then a separator, then `[^\n]*`) matched around the answer words only,
    each match then re-run on the whole text from its start (so its content is not cut)."""
    if len(text) <= 400:
        return list(pattern.finditer(text))
    found: list[re.Match[str]] = []
    for start, end in word_windows(text, ("답", "answer"), 40, 0):
        index = start
        while index < end:
            match = pattern.search(text, index, min(len(text), end + 400))
            if match is None or match.start() >= end:
                break
            full = pattern.match(text, match.start())
            if full is not None:
                found.append(full)
            index = match.start() + 1 if full is None else max(full.end(), match.start() + 1)
    return found


def statements(text: str) -> list[Stated]:
    """Every answer statement, in order (the text already without emphasis markers)."""
    found: list[Stated] = []
    for match in _key_matches(_STATEMENT, text):
        content = match.group("content")
        rest = content.strip()
        if match.group("word") and not rest:
            continue  # "정답은" at the end of a line without content: prose
        if not rest or rest in (":", "：") or _FOLLOWS.match(rest):
            block = _block_after(text, match.end())
            if not block:
                continue
            content = block
        boxes = boxed_all(content)
        if boxes:
            found.append(Stated(boxes[-1][1], "boxed", match.start()))
            continue
        tidy = _tidy(content)
        if tidy:
            found.append(Stated(tidy, "statement", match.start(), full=content.strip()))
    return found


def headings(text: str) -> list[Stated]:
    found = []
    for match in _key_matches(_HEADING, text):
        block = _block_after(text, match.end())
        if not block:
            continue
        boxes = boxed_all(block)
        found.append(Stated(boxes[-1][1], "boxed", match.start()) if boxes else
                     Stated(_tidy(block), "statement", match.start(), full=block))
    return found


def json_answer(text: str) -> Stated | None:
    """The last JSON object in the text with an answer key (its value as text, and raw)."""
    if not _JSON_HINT.search(text):
        return None
    for candidate in reversed(json_objects(text)):
        data = load_object(candidate)
        if data is None:
            continue
        keys = {str(k).strip(): v for k, v in data.items()}
        key = next((k for k in ANSWER_KEYS if k in keys), None)
        if key is None or keys[key] is None:
            continue
        value = keys[key]
        if isinstance(value, list):
            shown = ", ".join(str(v) for v in value)
        elif isinstance(value, dict):
            continue
        else:
            shown = str(value)
        rationale_key = next((k for k in RATIONALE_KEYS if k in keys), None)
        rationale = str(keys[rationale_key]) if rationale_key and keys[rationale_key] is not None else None
        position = text.rfind(candidate)
        return Stated(shown.strip(), "json", max(position, 0), rationale, value)
    return None


def bare_answer(text: str) -> Stated | None:
    stripped = text.strip()
    if not stripped or len(stripped) > BARE_MAX_CHARS or stripped.count("\n") >= BARE_MAX_LINES:
        return None
    return Stated(_tidy(unwrap_math(stripped)) or stripped, "bare", 0, full=stripped)


_CONNECTIVE = re.compile(r"(?:^|(?<=[.!?。])\s)\s*(?P<word>따라서|그러므로|그래서|결론적으로|결국|즉|요컨대|"
                         r"so|therefore|thus|hence)\b", re.I)
_CONCLUSION = re.compile(r"\s*[,:]?\s*(?P<body>.+?(?:입니다|이다|이에요|예요|임|됩니다|된다)\s*[.。!]?)\s*$")
_TOPIC = re.compile(r"[가-힣\w)\]](?:은|는)\s+")
CONCLUSION_MAX_CHARS = 300


def conclusion(text: str) -> Stated | None:
    """The answer the response's last sentence states when it concludes (`따라서 … 것은 ㄷ,
    ㅁ입니다.`), or None."""
    stripped = text.rstrip()
    start = stripped.rfind("\n") + 1
    line = stripped[start:]
    connectives = list(_CONNECTIVE.finditer(line))
    if not connectives:
        return None
    after = connectives[-1].end("word")
    match = _CONCLUSION.match(line, after) if len(line) - after <= CONCLUSION_MAX_CHARS else None
    topics = list(_TOPIC.finditer(match.group("body"))) if match else []
    if match is None or not topics:
        return None
    tidy = _tidy(match.group("body")[topics[-1].end():])
    position = start + match.start("body") + topics[-1].end()
    return Stated(tidy, "conclusion", position, full=line[connectives[-1].start("word"):].strip()) if tidy else None


def final_answer(visible: str, *, tail: int = 0) -> Stated | None:
    """The final answer the response states (see the module docstring), or None.

    With `tail` > 0 and no stated answer, the last `tail` characters are returned (method
    `tail`): what a judge reads for a long free answer. A looping response gets no tail."""
    text = strip_emphasis(visible or "")
    looped = loop_start(text)
    if looped is not None:
        text = text[:looped]
    candidates: list[Stated] = [Stated(content, "boxed", position) for position, content in boxed_all(text)]
    candidates.extend(statements(text))
    candidates.extend(headings(text))
    from_json = json_answer(text)
    if from_json is not None:
        candidates.append(from_json)
    if candidates:
        return max(candidates, key=lambda stated: stated.position)
    if looped is not None:
        return None
    concluded = conclusion(text)  # a short reply that concludes is read by its conclusion, not whole
    if concluded is not None:
        return concluded
    bare = bare_answer(text)
    if bare is not None:
        return bare
    if tail > 0 and text.strip():
        return Stated(text.strip()[-tail:], "tail", max(0, len(text) - tail))
    return None


def strip_label(text: str) -> str:
    """A leading part label removed: `(1) 3.2` → `3.2`, `a) x` → `x`, `A: x` → `x`."""
    return _LEADING_LABEL.sub("", text, count=1)
