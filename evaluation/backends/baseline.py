"""Heuristic answerers that look only at the options, never the question: they expose answer
artifacts (the key is often the longest option, or the one most like the others).

    baseline:longest   baseline:shortest   baseline:similar   baseline:position-N   baseline:last
    baseline:random-N  (a seeded guesser: N names the model; cheap stand-ins for many models at pool scale)

Three more rules stand in for models where none is installed (the demo), each saying so in its output:
`baseline:overlap` reads the question too and writes a rationale (evaluation/backends/overlap.py),
`baseline:echo` answers every format, short answers too, from the question's own words and numbers
(evaluation/backends/echo.py), `baseline:rubric-checks` is a judge made of checks
(evaluation/backends/rubric_checks.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from rapidfuzz import fuzz

from evaluation.backends.base import ChatRequest, Completion
from evaluation.backends.echo import EchoBackend
from evaluation.backends.overlap import OverlapBackend
from evaluation.backends.rubric_checks import RubricChecksBackend
from evaluation.models import ModelConfigError, ModelSpec

Chooser = Callable[[tuple[str, ...]], int]  # option texts → 1-based option number
RULES = ("overlap", "echo", "rubric-checks")  # baselines that read the question (sent as requests, not chosen here)


def _longest(options: tuple[str, ...]) -> int:
    return max(range(len(options)), key=lambda i: (len(options[i].strip()), -i)) + 1


def _shortest(options: tuple[str, ...]) -> int:
    return min(range(len(options)), key=lambda i: (len(options[i].strip()), i)) + 1


def _most_similar(options: tuple[str, ...]) -> int:
    """The option with the highest mean similarity to the other options."""
    def score(i: int) -> float:
        others = [fuzz.ratio(options[i], options[j]) for j in range(len(options)) if j != i]
        return sum(others) / len(others) if others else 0.0

    return max(range(len(options)), key=lambda i: (score(i), -i)) + 1


def _position(number: int) -> Chooser:
    return lambda options: min(number, len(options))


def _random(seed: int) -> Chooser:
    """A guesser: the option a hash of (seed, option texts) points at, so each `random-N` is its own
    model, stable across processes and reruns."""
    def choose(options: tuple[str, ...]) -> int:
        digest = hashlib.sha256("\x1f".join((str(seed), *options)).encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % len(options) + 1

    return choose


def chooser_for(name: str) -> Chooser:
    fixed = re.fullmatch(r"position-([1-9]\d?)", name)
    if fixed:
        return _position(int(fixed.group(1)))
    guesser = re.fullmatch(r"random-(\d{1,6})", name)
    if guesser:
        return _random(int(guesser.group(1)))
    named: dict[str, Chooser] = {"longest": _longest, "shortest": _shortest, "similar": _most_similar,
                                 "last": lambda options: len(options)}
    if name not in named:
        raise ModelConfigError(f"unknown baseline {name!r} (choose longest, shortest, similar, last, position-N, "
                               "random-N, overlap, echo or rubric-checks)")
    return named[name]


BASELINE_NAMES = ("longest", "shortest", "similar", "position-1", "last")


def baseline_backend(spec: ModelSpec) -> BaselineBackend | OverlapBackend | EchoBackend | RubricChecksBackend:
    if spec.model == "overlap":
        return OverlapBackend(spec)
    if spec.model == "echo":
        return EchoBackend(spec)
    if spec.model == "rubric-checks":
        return RubricChecksBackend(spec)
    return BaselineBackend(spec)


class BaselineBackend:
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.choose = chooser_for(spec.model)

    async def complete(self, request: ChatRequest) -> Completion:
        if not request.choices:
            return Completion("선택지가 없습니다.", finish_reason="stop")
        return Completion(json.dumps({"정답": self.choose(request.choices)}), finish_reason="stop")

    async def aclose(self) -> None:
        return None
