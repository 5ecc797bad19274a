"""`benchsmith runs import FILE --model NAME`: another tool's responses as a benchsmith run.

The file's rows (a KMMMU judge CSV, an lm-eval `--log_samples` file, an inspect log, an HRET
result, a JSONL of responses) are matched to store items — by id where the row has one and its
question, when the row carries it, is the item's; else by the question text (NFC, whitespace
folded) — and each response is scored by its item's checker (`scoring.score_key`, what the
runner scores with). The records are ordinary run records in `runs/RUN/`: the manifest's dataset
is the store query of the matched ids, so report, matrix, filter and analyze read the run as any
other. A row that becomes no record is listed with its reason (in the summary and the manifest);
what the tool itself said of a response (KMMMU's `is_correct`, lm-eval's `acc`, inspect's score,
HRET's `is_correct`) is kept beside our score in the record's `external`, never used as it.

A format without a checker yet leaves its records `undecided` (a judge or a person decides),
never `wrong`. Importing the same file again into the same run writes only what changed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from curation.core.errors import BenchsmithError, NotFoundError, WorkspaceError
from curation.core.facets import IN_PLAY
from curation.core.identity import content_hash
from curation.core.item import Item
from curation.core.store import Store, StoredItem
from curation.core.workspace import Workspace
from evaluation.backends.base import BackendError, Completion
from evaluation.human_verdicts import VerdictBook
from evaluation.records import (
    AnswerRecord,
    DatasetRef,
    ImportedFrom,
    ModelRef,
    PromptRef,
    RunConfig,
    RunManifest,
    UnmatchedRow,
    read_jsonl_records,
)
from evaluation.runlog import MANIFEST, RESPONSES, RunLog, now_iso, read_manifest, write_manifest
from scoring import Score
from scoring.portable import FORMATS
from scoring.portable.choice_parsing import split_thinking
from scoring.portable.verdict import settle_response

ImportFormat = Literal["kmmmu", "lm-eval", "inspect", "hret", "jsonl"]
IMPORT_FORMATS: tuple[str, ...] = get_args(ImportFormat)


@dataclass
class ResponseRow:
    """One response as another tool logged it, in the file's order."""

    row: int  # 1-based
    item_id: str | None = None
    question: str | None = None  # the question as the file has it (compared with the item's)
    prompt: str | None = None  # the text the tool sent (it must contain the item's question)
    text: str | None = None
    thinking: str | None = None  # a reasoning trace the tool kept apart from the text
    finish_reason: str | None = None
    error: str | None = None  # the tool got no response for the row: why
    external: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None  # why the row cannot be imported at all


# -- reading each tool's file -----------------------------------------------------------------

def _id(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = unicodedata.normalize("NFC", str(value)).strip()
    return text or None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _truth(value: Any) -> bool | None:
    """A tool's per-item verdict as a bool (True, "True", 1, 1.0, "C" …), None when it gave none."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value == 1 if value in (0, 1) else None
    if isinstance(value, str):
        return {"true": True, "1": True, "1.0": True, "c": True, "correct": True,
                "false": False, "0": False, "0.0": False, "i": False, "incorrect": False}.get(value.strip().lower())
    return None


def read_kmmmu(path: Path) -> list[ResponseRow]:
    """KMMMU's judge CSV: `question, answer, response, is_correct, …` and the unnamed index column
    pandas writes (the item id)."""
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        if not {"question", "response"} <= set(header):
            raise BenchsmithError(f"{path}: not a KMMMU judge CSV (it needs `question` and `response` columns; "
                                  f"it has {', '.join(header) or 'none'})")
        id_column = next((name for name in ("id", "item_id", "", "Unnamed: 0") if name in (reader.fieldnames or [])),
                         None)
        rows = []
        for number, line in enumerate(reader, start=1):
            verdict = _truth(line.get("is_correct"))
            external: dict[str, Any] = {"source": "kmmmu-judge", "row": number}
            if verdict is not None:
                external["is_correct"] = verdict
            rows.append(ResponseRow(number, _id(line.get(id_column)) if id_column is not None else None,
                                    question=line.get("question"), text=line.get("response") or "",
                                    external=external))
    return rows


def _generated(sample: dict[str, Any]) -> bool:
    """A `generate_until` sample: its request's second argument is the generation settings."""
    arguments = sample.get("arguments")
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    return isinstance(first, dict) and isinstance(first.get("arg_1"), dict)


def _first_text(value: Any) -> str | None:
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def read_lm_eval(path: Path) -> list[ResponseRow]:
    """lm-eval's `samples_TASK_DATE.jsonl` (`--log_samples`): `doc` (the dataset row: a release's
    carries `id` and `question`), `resps` (the raw generations), the metrics it scored."""
    task = re.sub(r"^samples_|_\d{4}-\d\d-\d\dT[\d\-.]+$", "", path.stem)
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as error:
            rows.append(ResponseRow(number, problem=f"not JSON ({error.msg})"))
            continue
        doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
        metrics = {name: sample.get(name) for name in sample.get("metrics") or [] if name in sample}
        external: dict[str, Any] = {"source": "lm-eval", "row": number, "task": task, "doc_id": sample.get("doc_id"),
                                    "filter": sample.get("filter"), "metrics": metrics}
        if _truth(metrics.get("acc")) is not None:
            external["is_correct"] = _truth(metrics["acc"])
        row = ResponseRow(number, _id(doc.get("id", doc.get("item_id"))), question=_text(doc.get("question")),
                          external=external)
        if not _generated(sample):
            row.problem = "not a generated answer (a loglikelihood or multiple-choice-by-likelihood sample)"
        else:
            row.text = _first_text(sample.get("resps"))
            if row.text is None:
                row.problem = "no generated text in `resps`"
        rows.append(row)
    return rows


_STOP_REASONS = {"stop": "stop", "max_tokens": "length", "model_length": "length", "content_filter": "content_filter"}


def read_inspect(path: Path) -> list[ResponseRow]:
    """An inspect log (`.eval` or `.json`), read with inspect_ai's own reader: each sample's id
    (or its metadata's `id`), its output's completion and stop reason, its scores."""
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.model import ContentReasoning
    except ImportError:
        raise BenchsmithError("reading an inspect log needs inspect_ai (pip install inspect_ai)") from None
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # inspect's reader raises whatever its parser met
        raise BenchsmithError(f"{path}: not an inspect log ({type(error).__name__}: {error})") from None
    rows = []
    for number, sample in enumerate(log.samples or [], start=1):
        metadata = sample.metadata or {}
        scores = {name: score.value for name, score in (sample.scores or {}).items()}
        external: dict[str, Any] = {"source": "inspect", "row": number, "task": log.eval.task,
                                    "sample_id": sample.id, "epoch": sample.epoch, "scores": scores}
        if len(scores) == 1 and _truth(next(iter(scores.values()))) is not None:
            external["is_correct"] = _truth(next(iter(scores.values())))
        messages = sample.input if isinstance(sample.input, list) else []
        prompt = sample.input if isinstance(sample.input, str) else "\n".join(
            message.text for message in messages if message.role == "user")
        output = sample.output
        choice = output.choices[0] if output is not None and output.choices else None
        row = ResponseRow(number, _id(metadata.get("id", metadata.get("item_id", sample.id))),
                          question=_text(metadata.get("question")), prompt=prompt, external=external)
        if sample.error is not None:
            row.error = sample.error.message
        if choice is not None:
            row.text = output.completion
            row.finish_reason = _STOP_REASONS.get(choice.stop_reason)
            content = choice.message.content if isinstance(choice.message.content, list) else []
            reasoning = [part.reasoning for part in content if isinstance(part, ContentReasoning) and not part.redacted]
            row.thinking = "\n\n".join(reasoning) or None
        elif row.error is None:
            row.error = "the log has no output for this sample"
        rows.append(row)
    return rows


def read_hret(path: Path) -> list[ResponseRow]:
    """HRET's result JSON (`EvaluationResult.to_dict()`: metrics, samples, info), or the release
    script's `{config: result}`: each sample's `prediction`, its `metadata.id` when it has one."""
    data = _json(path)
    results = ({"": data} if isinstance(data, dict) and "samples" in data else
               {name: value for name, value in data.items() if isinstance(value, dict) and "samples" in value}
               if isinstance(data, dict) else {})
    if not results:
        raise BenchsmithError(f"{path}: not an HRET result (no `samples`)")
    rows = []
    number = 0
    for config, result in results.items():
        for sample in result.get("samples") or []:
            number += 1
            if not isinstance(sample, dict):
                rows.append(ResponseRow(number, problem="a sample that is not an object"))
                continue
            metadata: dict[str, Any] = sample["metadata"] if isinstance(sample.get("metadata"), dict) else {}
            evaluation: dict[str, Any] = sample["evaluation"] if isinstance(sample.get("evaluation"), dict) else {}
            external: dict[str, Any] = {"source": "hret", "row": number, "reference": sample.get("reference")}
            if config:
                external["config"] = config
            if _truth(evaluation.get("is_correct")) is not None:
                external["is_correct"] = _truth(evaluation["is_correct"])
            row = ResponseRow(number, _id(metadata.get("id", metadata.get("item_id", sample.get("id")))),
                              question=_text(metadata.get("question")), prompt=_text(sample.get("input")),
                              text=_text(sample.get("prediction")), external=external)
            finish = sample.get("finish_reason")
            row.finish_reason = finish if isinstance(finish, str) and finish != "error" else None
            if row.text is None:
                row.error = str(sample.get("error") or "HRET has no prediction for this sample")
            rows.append(row)
    return rows


def read_jsonl(path: Path) -> list[ResponseRow]:
    """One response per line: `{"id" or "item_id", "response" or "text", "finish_reason"?, "question"?}`."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            rows.append(ResponseRow(number, problem=f"not JSON ({error.msg})"))
            continue
        if not isinstance(record, dict):
            rows.append(ResponseRow(number, problem="not a JSON object"))
            continue
        text = record.get("response", record.get("text"))
        row = ResponseRow(number, _id(record.get("id", record.get("item_id"))), question=_text(record.get("question")),
                          text=_text(text), finish_reason=_text(record.get("finish_reason")),
                          external={"source": "jsonl", "row": number})
        if row.text is None:
            if record.get("error"):
                row.error = str(record["error"])
            else:
                row.problem = "no `response` or `text`"
        rows.append(row)
    return rows


READERS: dict[str, Callable[[Path], list[ResponseRow]]] = {
    "kmmmu": read_kmmmu, "lm-eval": read_lm_eval, "inspect": read_inspect, "hret": read_hret, "jsonl": read_jsonl}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BenchsmithError(f"{path}: not JSON ({error})") from None


def detect_format(path: Path) -> str:
    """What the file says it is: an inspect log (`.eval`, or JSON with `eval` and `samples`), a
    CSV (KMMMU's), lm-eval's samples (`doc_id` and `resps`), an HRET result, or responses by id."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix == ".csv":
        return "kmmmu"
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
        try:
            record = json.loads(first) if first else {}
        except json.JSONDecodeError:
            record = {}
        return "lm-eval" if isinstance(record, dict) and {"doc_id", "resps"} <= record.keys() else "jsonl"
    if suffix == ".json":
        data = _json(path)
        if isinstance(data, dict) and "eval" in data and ("samples" in data or "version" in data):
            return "inspect"
        if isinstance(data, dict) and ("samples" in data or any(
                isinstance(value, dict) and "samples" in value for value in data.values())):
            return "hret"
    raise BenchsmithError(f"{path}: cannot tell what tool wrote it: pass --from {'|'.join(IMPORT_FORMATS)}")


# -- matching rows to store items -------------------------------------------------------------

def fold(text: str) -> str:
    """NFC, whitespace runs as one space, ends stripped: the form questions are compared in."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@dataclass(frozen=True)
class _Entry:
    """An item's texts as the matcher compares them (folded)."""

    item_id: str
    stem: str
    explicit: str | None
    options: tuple[str, ...]
    in_play: bool

    @classmethod
    def of(cls, item_id: str, stem: str, explicit: str | None, options: Iterable[str], status: str) -> _Entry:
        return cls(item_id, fold(stem), fold(explicit) if explicit else None,
                   tuple(text for text in (fold(option) for option in options) if text), status in IN_PLAY)

    def is_question(self, question: str) -> bool:
        """The folded question is this item's: its stem (or explicit stem), or its stem followed by
        its options (a file that keeps the options inside the question)."""
        if question in (self.stem, self.explicit):
            return True
        if not self.options or not self.stem or not question.startswith(self.stem):
            return False
        rest = question[len(self.stem):]
        return all(option in rest for option in self.options)

    def in_prompt(self, prompt: str) -> bool:
        return any(text and text in prompt for text in (self.stem, self.explicit))


def _entry(item: Item, status: str | None = None) -> _Entry:
    return _Entry.of(item.id, item.stem, item.explicit_variant, (option.text for option in item.options),
                     status or item.status)


class ItemMatcher:
    """Rows → store items: by id (checked against the row's question where it has one), else by
    the question text. The question index (every item's folded stem) is built only when a row
    needs it."""

    def __init__(self, store: Store):
        self.store = store
        self._index: dict[str, list[_Entry]] | None = None

    def _text_index(self) -> dict[str, list[_Entry]]:
        if self._index is None:
            index: dict[str, list[_Entry]] = {}
            for item_id, data, _digest in self.store.iter_rows():
                record = json.loads(data)
                entry = _Entry.of(item_id, record.get("stem") or "", record.get("explicit_variant"),
                                  ((option or {}).get("text") or "" for option in record.get("options") or []),
                                  record.get("status") or "extracted")
                for text in {entry.stem, entry.explicit or ""} - {""}:
                    index.setdefault(text, []).append(entry)
            self._index = index
        return self._index

    def by_question(self, question: str) -> list[_Entry]:
        """The items whose question this is: the whole text, else its longest start (at a line
        break) that is an item's stem followed by that item's options."""
        index = self._text_index()
        folded = fold(question)
        found = [entry for entry in index.get(folded, []) if entry.is_question(folded)]
        lines = unicodedata.normalize("NFC", question).split("\n")
        for end in range(len(lines) - 1, 0, -1):
            if found:
                break
            start = fold("\n".join(lines[:end]))
            found = [entry for entry in index.get(start, []) if entry.is_question(folded)]
        if len(found) > 1 and sum(entry.in_play for entry in found) == 1:
            found = [entry for entry in found if entry.in_play]  # an excluded duplicate yields to the item in play
        return found

    def match(self, rows: Sequence[ResponseRow]) -> tuple[dict[int, StoredItem], list[UnmatchedRow], Counter[str]]:
        """Row number → its item, the rows left unmatched with their reasons, and how many
        matched by id and by question."""
        by_id = self.store.get_many(sorted({row.item_id for row in rows if row.item_id}))
        chosen: dict[int, str] = {}
        how: Counter[str] = Counter()
        unmatched: dict[int, str] = {}
        for row in rows:
            if row.problem is not None:
                unmatched[row.row] = row.problem
                continue
            stored = by_id.get(row.item_id) if row.item_id else None
            if stored is not None:
                entry = _entry(stored.item)
                if row.question is not None:
                    agrees = entry.is_question(fold(row.question))
                else:
                    agrees = row.prompt is None or entry.in_prompt(fold(row.prompt))
                if agrees:
                    chosen[row.row] = stored.item.id
                    how["id"] += 1
                    continue
                said = (f"item {row.item_id!r} has another question" if row.question is not None
                        else f"the row's input does not contain item {row.item_id!r}'s question")
            elif row.item_id:
                said = f"no item {row.item_id!r}"
            else:
                said = "the row names no item id"
            if row.question is None or not fold(row.question):
                unmatched[row.row] = said + (" and carries no question text" if row.question is None else
                                             " and its question is empty")
                continue
            found = self.by_question(row.question)
            if len(found) == 1:
                chosen[row.row] = found[0].item_id
                how["question"] += 1
            elif not found:
                unmatched[row.row] = f"{said}, and no item has its question text"
            else:
                names = ", ".join(sorted(entry.item_id for entry in found)[:5])
                unmatched[row.row] = (f"ambiguous: its question text is that of {len(found)} items ({names}"
                                      f"{' …' if len(found) > 5 else ''})")
        missing = sorted(set(chosen.values()) - by_id.keys())
        items = by_id | (self.store.get_many(missing) if missing else {})
        matched: dict[int, StoredItem] = {}
        answered_by: dict[str, int] = {}
        for row in rows:
            item_id = chosen.get(row.row)
            if item_id is None:
                continue
            stored = items[item_id]
            if item_id in answered_by:
                unmatched[row.row] = f"item {item_id!r} is already answered by row {answered_by[item_id]}"
                how["id" if row.item_id == item_id else "question"] -= 1
            elif stored.item.answer is None:
                unmatched[row.row] = f"item {item_id!r} has no answer key (nothing to score against)"
                how["id" if row.item_id == item_id else "question"] -= 1
            else:
                answered_by[item_id] = row.row
                matched[row.row] = stored
        return matched, [UnmatchedRow(row=number, reason=reason) for number, reason in sorted(unmatched.items())], how


# -- scoring and writing the run --------------------------------------------------------------

def scored_fields(item: Item, row: ResponseRow) -> dict[str, Any]:
    """The record fields of a response, scored as the runner scores one (`runner.score`); a
    format with no checker here yet is `undecided` (a cut-off or refused response is still an error)."""
    from evaluation.runner import score

    if row.text is None:
        return score(item, None, BackendError("server", row.error or "no response"))
    completion = Completion(row.text, thinking=row.thinking, finish_reason=row.finish_reason)
    try:
        fields = score(item, completion, None)
    except ValueError:
        if item.answer_format in FORMATS:
            raise
    else:
        return {key: value for key, value in fields.items() if key != "usage"}
    fmt = item.answer_format or ""
    visible, thinking, cut = split_thinking(row.text)
    settled = settle_response(row.finish_reason, cut, False, fmt, "")
    result = Score.from_verdict(settled) if settled is not None else Score(
        outcome="undecided", checker=fmt, explanation=f"no checker for the {fmt} format: a judge or a person decides")
    thinking = "\n\n".join(part for part in (row.thinking, thinking) if part) or None
    return {"answer": None, "text": row.text, "thinking": thinking, "finish_reason": row.finish_reason,
            "outcome": result.outcome, "score": result.model_dump(mode="json"),
            "error": {"kind": result.error_kind, "message": result.explanation} if result.outcome == "error" else None}


@dataclass
class ImportSummary:
    run_id: str
    run_dir: Path
    format: str
    path: Path
    rows: int
    matched: int
    unmatched: list[UnmatchedRow]
    matched_by: dict[str, int]
    written: int  # records appended (new, or changed since an earlier import)
    unchanged: int  # records an earlier import of the file already holds
    outcomes: dict[str, int] = field(default_factory=dict)
    external: dict[str, int] = field(default_factory=dict)  # agree / disagree with the tool's own verdicts
    judge: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "rows": self.rows, "matched": self.matched,
                "unmatched": [row.model_dump() for row in self.unmatched],
                "judged": self.judge["asked"] if self.judge else 0,
                "format": self.format, "file": str(self.path), "run_dir": str(self.run_dir),
                "matched_by": self.matched_by, "written": self.written, "unchanged": self.unchanged,
                "outcomes": self.outcomes, "external": self.external, "judge": self.judge}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def _same(old: AnswerRecord | None, new: dict[str, Any]) -> bool:
    return old is not None and (old.content_hash, old.text, old.finish_reason, old.external) == (
        new.get("content_hash"), new.get("text"), new.get("finish_reason"), new.get("external"))


def external_agreement(records: Iterable[dict[str, Any] | AnswerRecord]) -> dict[str, int]:
    """How often the tool's own per-item verdict agrees with our decided outcome."""
    counts = {"agree": 0, "disagree": 0}
    for record in records:
        outcome, external = ((record.outcome, record.external) if isinstance(record, AnswerRecord)
                             else (record.get("outcome"), record.get("external")))
        verdict = (external or {}).get("is_correct")
        if isinstance(verdict, bool) and outcome in ("correct", "wrong"):
            counts["agree" if verdict == (outcome == "correct") else "disagree"] += 1
    return counts


def import_run(ws: Workspace, path: Path, model: str, fmt: str | None = None, run_id: str | None = None,
               matcher: ItemMatcher | None = None) -> ImportSummary:
    """Read the file, match its rows, score them and write (or bring up to date) the run;
    `matcher`, one shared by several files of the same store."""
    path = Path(path)
    if not path.is_file():
        raise NotFoundError(f"no such file {path}")
    if fmt is not None and fmt not in IMPORT_FORMATS:
        raise BenchsmithError(f"--from {fmt!r}: choose one of {', '.join(IMPORT_FORMATS)}")
    fmt = fmt or detect_format(path)
    if not model.strip():
        raise BenchsmithError("--model: name the model whose responses these are")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    rows = READERS[fmt](path)
    matched, unmatched, how = (matcher or ItemMatcher(ws.store)).match(rows)
    if not matched:
        first = "; ".join(f"row {row.row}: {row.reason}" for row in unmatched[:3])
        raise BenchsmithError(f"{path}: none of its {len(rows)} rows matches a store item ({first or 'no rows'})")

    identity = {"model": model, "from": fmt, "sha256": digest}
    config_hash = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    run_id = run_id or f"{_slug(model)}-{fmt}-{config_hash}"
    run_dir = ws.runs_dir / run_id
    before: RunManifest | None = None
    if (run_dir / MANIFEST).exists():
        previous = read_manifest(run_dir)
        if not isinstance(previous, RunManifest) or previous.config_hash != config_hash:
            raise WorkspaceError(f"run {run_id!r} exists and is not an import of this file for {model!r}: "
                                 "choose another --run-id")
        before = previous
    ordered = [matched[number] for number in sorted(matched)]
    item_ids = [stored.item.id for stored in ordered]
    dataset = DatasetRef(kind="store", query={"ids": sorted(item_ids)})
    manifest = RunManifest(
        run_id=run_id, kind="answers", created_at=before.created_at if before else now_iso(), config_hash=config_hash,
        model=ModelRef.model_validate({"name": model, "backend": "imported"}), prompt=PromptRef(name=fmt, version=f"imported-{fmt}"),
        variant="implicit",
        config=RunConfig(model={"backend": "imported", "model": model}, decoding={}, prompt_version=f"imported-{fmt}",
                         variant="implicit", dataset=dataset),
        dataset=dataset, item_ids=item_ids, workspace=str(ws.root),
        imported=ImportedFrom(format=fmt, path=str(path.resolve()), sha256=digest, rows=len(rows),  # type: ignore[arg-type]
                              matched=len(matched), unmatched=unmatched))
    write_manifest(run_dir, manifest)

    existing = read_jsonl_records(run_dir / RESPONSES, AnswerRecord) if before else {}
    book = VerdictBook.read(run_dir) if before else None  # a person's verdict stays on an unchanged response
    stamp = now_iso()
    lines, unchanged = [], 0
    final: list[dict[str, Any] | AnswerRecord] = []
    by_number = {row.row: row for row in rows}
    for number in sorted(matched):
        stored, row = matched[number], by_number[number]
        item = stored.item
        record = {"item_id": item.id, "content_hash": stored.content_hash or content_hash(item, "implicit"),
                  "gold": item.gold(),  # as the runner records it
                  **scored_fields(item, row), "external": row.external, "ts": stamp}
        record = AnswerRecord.model_validate(record).model_dump(mode="json", exclude_none=True)
        if book:
            record = book.apply(record)
        old = existing.get(item.id)
        lost = bool(book) and old is not None and old.typed_score().decided_by != "human" \
            and record["score"].get("decided_by") == "human"  # a person's verdict a later line dropped
        if _same(old, record) and not lost:
            unchanged += 1
            final.append(old)  # type: ignore[arg-type]
            continue
        lines.append(record)
        final.append(record)
    if lines:
        log = RunLog(run_dir / RESPONSES)
        try:
            log.append_many(lines)
        finally:
            log.close()
    outcomes = Counter(record.outcome if isinstance(record, AnswerRecord) else record["outcome"] for record in final)
    matched_by = {by: count for by, count in how.items() if count}
    return ImportSummary(run_id, run_dir, fmt, path, len(rows), len(matched), unmatched, matched_by, len(lines),
                         unchanged, dict(sorted(outcomes.items())), external_agreement(final))


def refresh_outcomes(summary: ImportSummary) -> None:
    """The summary's outcome and agreement counts read again from the run (after a judge)."""
    current = list(read_jsonl_records(summary.run_dir / RESPONSES, AnswerRecord).values())
    summary.outcomes = dict(sorted(Counter(record.outcome for record in current).items()))
    summary.external = external_agreement(current)
