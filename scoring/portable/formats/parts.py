"""Parts: a multi-part answer ((1) … (2) …), one key per part, each checked by its own format.

Key: `{"format": "parts", "parts": [{"format": "numeric", …}, {"format": "text", …}],
"labels": ["(1)", "(2)"]}` (labels optional: `(1)`, `(2)` … by default).

How a response is split into its parts, the first that finds them winning:

1. the stated final answer (`정답:` with the lines after it, or a boxed answer) split at the
   labels: a label matches in the forms `(1)`, `1)`, `1.`, `1:`, `[1]` for `(1)`, and `(a)`, `a)`,
   `A:`, `A =` for letter labels (letters case-insensitive), at the start of the answer or after a
   space or a separator;
2. as many `\\boxed{}` as there are parts: the last ones, in order;
3. the whole response split at the labels (for each label its last place before the next
   label's), each part's own answer read from its piece (its `정답:`, its box, or a short piece as
   it is);
4. the stated final answer with only some of the labels: the parts it names (the others are not
   answered);
5. the stated final answer split at new lines, `;` or `,` into exactly as many pieces as parts,
   taken in order.

Each part is then read by its own format from its piece (a piece that is only the answer is the
answer) and checked by it. A part the response does not answer counts as wrong. The value is the
share of parts correct; the outcome is `correct` only when every part is, `wrong` when a part is
wrong and none is undecided, else `undecided`. The per-part verdicts are in `details["parts"]`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..extraction import boxed_all, final_answer, strip_emphasis, strip_label
from ..verdict import Verdict
from .base import AnswerFormat, Extraction

NAME = "parts"
VERSION = "parts-2"
_BEFORE = r"(?:^|(?<=[\s,;/|·]))"
_LABEL_CORE = re.compile(r"^\s*[(\[]?\s*([0-9]{1,2}|[A-Za-z]|[가-하]|[ㄱ-ㅎ]|[①-⑳])\s*[)\]]?\s*[:.=]?\s*$")
# how answer-key cells label their parts: (1) … (2) …, 1) 2), (a) (b), a) b), A: B:, (가) (나)
_KEY_STYLES = [re.compile(_BEFORE + pattern) for pattern in (
    r"\(\s*(\d{1,2})\s*\)", r"(\d{1,2})\s*\)", r"\(\s*([a-zA-Z])\s*\)", r"([a-z])\s*\)", r"([A-Z])\s*[:：]",
    r"\(\s*([가-하])\s*\)")]
_HANGUL_ORDER = "가나다라마바사아자차카타파하"


def default_labels(n: int) -> list[str]:
    return [f"({index})" for index in range(1, n + 1)]


def label_core(label: str) -> str:
    match = _LABEL_CORE.match(label)
    return match.group(1) if match else label.strip()


def label_pattern(label: str) -> re.Pattern[str]:
    core = label_core(label)
    escaped = re.escape(core)
    if core.isdigit():
        forms = rf"[(\[]\s*{escaped}\s*[)\]]|{escaped}\s*\)|{escaped}\s*[.:](?!\d)"
    elif core.isascii() and core.isalpha():
        forms = rf"[(\[]\s*{escaped}\s*[)\]]|{escaped}\s*\)|{escaped}\s*(?:[:：=]|[은는](?![가-힣]))"
    else:
        forms = rf"[(\[]\s*{escaped}\s*[)\]]|{escaped}\s*[):：.]"
    flags = re.I if core.isascii() and core.isalpha() else 0
    return re.compile(rf"{_BEFORE}(?:{forms})", flags)


def split_by_labels(text: str, labels: Sequence[str], partial: bool = False) -> list[str | None] | None:
    """The pieces after each label, in label order (each label's last place before the next
    label's). None unless every label is found; with `partial`, a label not found gives a None
    piece (None still when no label is found)."""
    patterns = [label_pattern(label) for label in labels]
    spans: list[tuple[int, int] | None] = []
    limit = len(text)
    for pattern in reversed(patterns):
        last = None
        for match in pattern.finditer(text, 0, limit):
            last = match
        if last is None:
            if not partial:
                return None
            spans.append(None)
            continue
        spans.append((last.start(), last.end()))
        limit = last.start()
    spans.reverse()
    if all(span is None for span in spans):
        return None
    pieces: list[str | None] = []
    for index, span in enumerate(spans):
        if span is None:
            pieces.append(None)
            continue
        stop = next((later[0] for later in spans[index + 1:] if later is not None), len(text))
        pieces.append(text[span[1]:stop].strip().strip(",;/|").strip())
    return pieces


def _successor(core: str) -> str:
    if core.isdigit():
        return str(int(core) + 1)
    if core in _HANGUL_ORDER:
        index = _HANGUL_ORDER.index(core) + 1
        return _HANGUL_ORDER[index] if index < len(_HANGUL_ORDER) else ""
    return chr(ord(core) + 1)


def _labelled(text: str) -> list[re.Match[str]]:
    """The labels of a key text: of the label styles with at least two successive labels, the
    one that starts first; its labels in succession (1, 2, 3 …; a, b …; 가, 나 …)."""
    best: list[re.Match[str]] = []
    for style in _KEY_STYLES:
        chain: list[re.Match[str]] = []
        for match in style.finditer(text):
            if not chain or match.group(1) == _successor(chain[-1].group(1)):
                chain.append(match)
        if len(chain) >= 2 and (not best or chain[0].start() < best[0].start()):
            best = chain
    return best


def split_in_order(text: str, n: int) -> list[str] | None:
    for separator in (r"\n+", r"\s*;\s*", r"\s*,\s*"):
        pieces = [piece.strip() for piece in re.split(separator, text.strip()) if piece.strip()]
        if len(pieces) == n:
            return [strip_label(piece) for piece in pieces]
    return None


class PartsFormat:
    name = NAME
    version = VERSION

    def __init__(self, formats: Mapping[str, AnswerFormat]) -> None:
        self._formats = formats  # the registry's table (the parts' own formats), given, not imported

    def _format(self, part: dict[str, Any]) -> AnswerFormat:
        name = str(part.get("format", ""))
        if name == NAME or name not in self._formats:
            raise ValueError(f"a part cannot be checked as {name!r}")
        return self._formats[name]

    def _labels(self, key: dict[str, Any]) -> list[str]:
        parts = key.get("parts") or []
        labels = key.get("labels")
        return list(labels) if labels and len(labels) == len(parts) else default_labels(len(parts))

    def instruction(self, key: dict[str, Any]) -> str:
        labels = self._labels(key)
        example = " ".join(f"{label} \\boxed{{…}}" for label in labels[:2])
        return ("풀이 과정을 쓴 다음, 마지막에 각 물음의 최종 답을 번호와 함께 \\boxed{} 안에 쓰십시오. "
                f"예: {example}")

    def answer_text(self, key: dict[str, Any]) -> str:
        parts = key.get("parts") or []
        return " ".join(f"{label} {self._format(part).answer_text(part)}"
                        for label, part in zip(self._labels(key), parts, strict=False))

    def parse_key_text(self, text: str) -> dict[str, Any]:
        """`(1) -4.45 (2) 3.2 m` → two parts, each parsed as the first format that reads it
        (numeric, set, expression, then text, or judged for a long piece). Raises ValueError
        when fewer than two labelled parts are found."""
        matches = _labelled(text)
        if len(matches) < 2:
            raise ValueError(f"not a multi-part answer: {text!r}")
        pieces = [text[match.end():matches[index + 1].start() if index + 1 < len(matches) else len(text)]
                  .strip().strip(",;/|").strip() for index, match in enumerate(matches)]
        if any(not piece for piece in pieces):
            raise ValueError(f"a part is empty: {text!r}")
        return {"format": NAME, "parts": [self.guess_part(piece) for piece in pieces],
                "labels": [match.group(0).strip() for match in matches]}

    def guess_part(self, piece: str) -> dict[str, Any]:
        if "\n" not in piece.strip() and len(piece) <= 120:
            for name in ("numeric", "set", "expression"):
                try:
                    return self._formats[name].parse_key_text(piece)
                except ValueError:
                    continue
                except KeyError:
                    break
            if len(piece) <= 60:
                return self._formats["text"].parse_key_text(piece)
        return self._formats["judged"].parse_key_text(piece)

    def pieces(self, visible: str, key: dict[str, Any]) -> tuple[list[str | None] | None, str | None]:
        """(one piece per part, None for a part not answered; how they were found)."""
        labels = self._labels(key)
        n = len(labels)
        text = strip_emphasis(visible)
        stated = final_answer(text)
        if stated is not None:
            found = split_by_labels(stated.text, labels)
            if found is not None:
                return found, "statement"
        boxes: list[str | None] = [content for _position, content in boxed_all(text)]
        if len(boxes) >= n:
            return boxes[-n:], "boxed"
        found = split_by_labels(text, labels)
        if found is not None:
            return found, "labels"
        if stated is not None:
            found = split_by_labels(stated.text, labels, partial=True)
            if found is not None:
                return found, "statement"
            ordered = split_in_order(stated.text, n)
            if ordered is not None:
                return list(ordered), "order"
        return None, None

    def extract(self, visible: str, key: dict[str, Any], options: Sequence[str]) -> Extraction:
        pieces, method = self.pieces(visible, key)
        if pieces is None:
            return Extraction(None)
        answers: list[Any] = []
        for piece, part in zip(pieces, key.get("parts") or [], strict=False):
            extraction = self._format(part).extract(piece, part, options) if piece else Extraction(None)
            answers.append(extraction.value)
        if all(answer is None for answer in answers):
            return Extraction(None)
        return Extraction(answers, method)

    def check(self, extracted: Any, key: dict[str, Any], options: Sequence[str]) -> Verdict:
        parts = key.get("parts") or []
        if isinstance(extracted, str):
            answers: list[Any] = self.extract(extracted, key, options).value or [None] * len(parts)
        else:
            answers = list(extracted or [])
        answers += [None] * (len(parts) - len(answers))
        verdicts: list[dict[str, Any]] = []
        for answer, part in zip(answers, parts, strict=False):
            fmt = self._format(part)
            if answer is None:
                verdict = Verdict("wrong", 0.0, None, fmt.name, fmt.version, "this part is not answered")
            else:
                verdict = fmt.check(answer, part, options)
            verdicts.append(verdict.as_dict())
        outcomes = [verdict["outcome"] for verdict in verdicts]
        correct = outcomes.count("correct")
        if correct == len(parts):
            outcome = "correct"
        elif "undecided" not in outcomes:
            outcome = "wrong"
        else:
            outcome = "undecided"
        explanation = f"{correct} of {len(parts)} parts correct" + (
            f", {outcomes.count('undecided')} undecided" if "undecided" in outcomes else "")
        return Verdict(outcome, correct / len(parts) if parts else 0.0, answers, NAME, VERSION, explanation,
                       details={"parts": verdicts})
