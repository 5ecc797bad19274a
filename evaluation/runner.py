"""Answer runs: a dataset's items → requests → the request sender → one scored record per item.

A run lives in `runs/RUN_ID/`; its id is derived from every setting that shapes a request or
its scoring (model identity and capabilities, prompt version, variant, decoding with the
seed, the dataset's selection), so running the same command again resumes it. A finished
record counts as done only while its content hash matches the item now: after k of n items
were edited, a rerun asks exactly those k again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from curation.core.errors import BenchsmithError, WorkspaceError
from curation.core.identity import content_hash
from curation.core.item import Answerable, Item
from curation.core.query import (
    in_play,
    parse_item_query,  # noqa: F401 - re-exported: the runner's --items syntax
)
from curation.core.store import ItemQuery
from curation.core.workspace import Workspace
from curation.pool_gc import pool_thresholds
from evaluation.backends.base import BackendError, Completion
from evaluation.backends.echo import NAME as ECHO
from evaluation.cache import cache_key
from evaluation.cells import run_cells
from evaluation.datasets import Dataset, StoreDataset
from evaluation.human_verdicts import VerdictBook
from evaluation.models import ModelSpec
from evaluation.prompts import ImageResolver, Prompt, Variant, build_request, get_prompt
from evaluation.records import AnswerRecord, DatasetRef, ModelRef, PromptRef, RunConfig, RunManifest
from evaluation.runlog import RESPONSES, RunLog, now_iso, read_answer_manifest, read_manifest, write_manifest
from evaluation.sender import FEED_CHUNK, Job, SenderSettings, send_jobs
from scoring import Score, score_key
from scoring.portable import FORMATS, OUTCOMES
from scoring.portable.choice_parsing import split_thinking


@dataclass
class RunSummary:
    run_id: str
    run_dir: Path
    total: int
    done_before: int
    counts: dict[str, int]
    skipped: dict[str, str]
    stats: dict[str, Any] = field(default_factory=dict)


def score(item: Item, completion: Completion | None, error: BackendError | None) -> dict[str, Any]:
    """One item's record fields: its typed Score (`scoring`) and what the response carried."""
    if completion is None:
        kind = error.kind if error else "error"
        failed = Score(outcome="error", error_kind=kind, explanation=str(error),
                       checker=item.answer_format or "", checker_version="")
        return {"outcome": "error", "error": {"kind": kind, "message": str(error)}, "answer": None,
                "score": failed.model_dump(mode="json")}
    if item.answer_format in FORMATS:
        result = score_key(item.answer, completion.text, [option.text for option in item.options],
                           completion.finish_reason)
    else:  # a format without a checker here: a judge or a person decides
        result = Score(outcome="undecided", checker=item.answer_format or "",
                       explanation=f"no checker for the {item.answer_format} format")
    visible, thinking, _ = split_thinking(completion.text or "")
    record: dict[str, Any] = {
        "answer": result.extracted, "parse_method": result.details.get("method"), "text": completion.text,
        "thinking": "\n\n".join(t for t in (completion.thinking, thinking) if t) or None,
        "rationale": result.details.get("rationale"), "finish_reason": completion.finish_reason,
        "usage": completion.usage, "model_version": completion.model_version,
        "outcome": result.outcome, "score": result.model_dump(mode="json"),
        "error": {"kind": result.error_kind, "message": result.explanation} if result.outcome == "error" else None,
    }
    return record


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def run_config(spec: ModelSpec, prompt: Prompt, variant: str, dataset: Dataset) -> dict[str, Any]:
    """What makes two runs the same run (and so resumable one from the other)."""
    return {"model": spec.identity(), "capabilities": spec.capabilities.model_dump(),
            "decoding": spec.decoding.model_dump(exclude={"stream"}), "prompt_version": prompt.version,
            "variant": variant, "dataset": dataset.identity()}


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, ensure_ascii=False, default=list).encode()).hexdigest()[:10]


def select_items(items: Iterable[Answerable], spec: ModelSpec, variant: Variant = "implicit"
                 ) -> tuple[list[Answerable], dict[str, str]]:
    """The items this model can be asked under `variant`, and why each other item is left out."""
    chosen: list[Answerable] = []
    skipped: dict[str, str] = {}
    # the baselines choose an option: they answer choice keys only (but the rule that echoes the question)
    option_only = spec.backend == "baseline" and spec.model != ECHO
    probe = variant in ("options_only", "question_only")  # a shortcut probe hides the question or the options
    for item in items:
        if not item.options and item.answer_format in (None, "choice"):
            skipped[item.id] = "no options"  # a choice key needs its options; other formats need none
        elif item.answer is None:
            skipped[item.id] = "no answer key"
        elif option_only and item.answer_format != "choice":
            skipped[item.id] = "not a choice item"
        elif probe and item.answer_format != "choice":
            skipped[item.id] = f"not a choice item ({variant.replace('_', '-')} probes choice items only)"
        elif item.multimodal and not spec.capabilities.vision:
            skipped[item.id] = "has images; the model is text-only"
        else:
            chosen.append(item)
    return chosen, skipped


@dataclass
class RunRequest:
    spec: ModelSpec
    prompt_name: str = "standard"
    variant: Variant = "implicit"
    dataset: Dataset | None = None  # None: every item in the workspace's store
    run_id: str | None = None
    resume: bool = True
    use_cache: bool = True
    retry_errors: bool = False
    settings: SenderSettings = field(default_factory=SenderSettings)


def _open_run_dir(ws: Workspace, request: RunRequest, config: dict[str, Any]) -> tuple[str, Path]:
    digest = config_hash(config)
    run_id = request.run_id or f"{_slug(request.spec.name)}-{request.prompt_name}-{request.variant}-{digest}"
    run_dir = ws.runs_dir / run_id
    if (run_dir / "manifest.json").exists():
        if not request.resume:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            run_id = f"{run_id}-{stamp}"
            return run_id, ws.runs_dir / run_id
        previous = read_manifest(run_dir)
        if not isinstance(previous, RunManifest) or previous.config_hash != digest:
            raise WorkspaceError(f"run {run_id!r} exists with a different model/prompt/items configuration: "
                                 "choose another --run-id or pass --no-resume")
    return run_id, run_dir


class _Selection:
    """Which items a run is about and where each stands. Only the items not already answered on
    their current content are read from the dataset (under the implicit variant a store item's
    hash is a column): a resumed or cached run costs what is left to do, not the pool. Those can
    be read in parts (`read`), so the first requests go out before the rest is read."""

    def __init__(self, dataset: Dataset, spec: ModelSpec, variant: Variant, cells: pa.Table, retry_errors: bool,
                 views: bool = False):
        self._spec, self._variant, self._cells, self._retry_errors = spec, variant, cells, retry_errors
        self._views = views  # the items are answered from their options here: `AnswerView`s suffice
        self.skipped: dict[str, str] = {}
        self.done: dict[str, str] = {}  # item → outcome of its current record
        self.to_ask: list[tuple[Answerable, str]] = []
        self.changed = 0
        self._store: StoreDataset | None = None
        self._unread: list[str] = []  # store items to read, in dataset order
        if isinstance(dataset, StoreDataset) and variant == "implicit":
            self._store = dataset
            ids, digests = dataset.current_columns()
            self.order = ids.to_pylist()
            settled, outcomes = self._settled_columns(ids, digests)
            self.done = dict(zip(ids.filter(settled).to_pylist(), outcomes.filter(settled).to_pylist(), strict=True))
            self._unread = ids.filter(pc.invert(settled)).to_pylist()
        else:
            fresh = dataset.items()
            self.order = [item.id for item in fresh]
            self._add(fresh, {})
        if not self.order:
            raise BenchsmithError("no items match the selection (import some with `benchsmith items import`)")

    @cached_property
    def _logged(self) -> dict[str, tuple[str | None, str]]:
        """Item → (content hash, outcome) of its last logged record."""
        columns = (self._cells[name].to_pylist() for name in ("item_id", "content_hash", "outcome"))
        ids, hashes, outcomes = columns
        return dict(zip(ids, zip(hashes, outcomes, strict=True), strict=True))

    def _settled(self, item_id: str, digest: str) -> bool:
        logged_hash, outcome = self._logged.get(item_id, (None, ""))
        return logged_hash == digest and not (self._retry_errors and outcome == "error")

    def _settled_columns(self, ids: pa.Array, digests: pa.Array) -> tuple[pa.Array, pa.Array]:
        """`_settled` for every item at once, in Arrow; and each item's logged outcome."""
        row = pc.index_in(ids, value_set=self._cells["item_id"])
        logged_hash = self._cells["content_hash"].take(row)
        outcome = self._cells["outcome"].take(row)
        settled = pc.fill_null(pc.equal(logged_hash, digests), False)
        if self._retry_errors:
            settled = pc.and_(settled, pc.fill_null(pc.not_equal(outcome, "error"), True))
        return settled, outcome

    @property
    def complete(self) -> bool:
        return not self._unread

    def read(self, count: int | None = None) -> None:
        """Read the next `count` unread items (all by default)."""
        ids = self._unread if count is None else self._unread[:count]
        self._unread = self._unread[len(ids):]
        if self._store is not None and ids:
            found = self._store.lookup_views(ids) if self._views else self._store.lookup_hashed(ids)
            self._add([found[item_id][0] for item_id in ids if item_id in found],
                      {item_id: digest for item_id, (_, digest) in found.items()})

    def _add(self, fresh: Sequence[Answerable], hashes: dict[str, str | None]) -> None:
        chosen, skipped = select_items(fresh, self._spec, self._variant)
        self.skipped.update(skipped)
        for item in chosen:
            digest = hashes.get(item.id) or content_hash(_whole(item), self._variant)
            if self._settled(item.id, digest):
                self.done[item.id] = self._logged[item.id][1]
            else:
                self.changed += item.id in self._logged and self._logged[item.id][0] != digest
                self.to_ask.append((item, digest))

    def item_ids(self) -> list[str]:
        """The items asked or to ask, in dataset order."""
        asked = self.done.keys() | {item.id for item, _ in self.to_ask}
        return [item_id for item_id in self.order if item_id in asked]


def _whole(item: Answerable) -> Item:
    """The item itself: a request or a hash needs it (views are only read for local answers,
    and only with their stored hash)."""
    if not isinstance(item, Item):
        raise TypeError(f"{item.id}: an answer view where the whole item is needed")
    return item


_READ_PART = 256  # items read at a time while the first requests are out


@dataclass
class PreparedRun:
    """A run ready to execute: its folder exists and finished items are known. Its manifest is
    written once every item is read: by `prepare_run`, or by `stream_jobs` when only the first
    items were read."""

    run_id: str
    run_dir: Path
    selection: _Selection
    job_for: Callable[[Item, str], Job]
    describe: Callable[[list[str], dict[str, str]], None]  # writes the manifest: item ids, skipped
    item_ids: list[str] = field(default_factory=list)  # the items asked (or to ask), in dataset order, once all are read
    complete: bool = False  # every item read and the manifest written

    @property
    def skipped(self) -> dict[str, str]:
        return self.selection.skipped

    @property
    def done(self) -> dict[str, str]:
        return self.selection.done

    @property
    def changed(self) -> int:
        return self.selection.changed

    @property
    def to_ask(self) -> list[tuple[Answerable, str]]:
        """(item, its content hash): what is left to do, in item order."""
        return self.selection.to_ask

    @property
    def done_before(self) -> int:
        return len(self.item_ids) - len(self.to_ask)

    def read_rest(self) -> None:
        """Read the items not read yet and write the manifest (the selection as of this (re)run)."""
        self.selection.read()
        self.item_ids = self.selection.item_ids()
        self.describe(self.item_ids, self.selection.skipped)
        self.complete = True

    def jobs(self) -> Iterator[Job]:
        """The requests still to send, built one by one (the sender overlaps this with sending)."""
        return (self.job_for(_whole(item), digest) for item, digest in self.to_ask)

    async def stream_jobs(self, on_complete: Callable[[], None]) -> AsyncIterator[Job]:
        """Like `jobs`, for a run whose items were read only in part: the first requests, then
        (while they are out) the rest of the items read a part at a time, the manifest written,
        `on_complete` called, and the rest of the requests."""
        first = len(self.to_ask)
        for item, digest in self.to_ask[:first]:
            yield self.job_for(_whole(item), digest)
        while not self.selection.complete:
            await asyncio.sleep(0)  # the loop sends and receives between parts
            self.selection.read(_READ_PART)
        self.read_rest()
        on_complete()
        for item, digest in self.to_ask[first:]:
            yield self.job_for(_whole(item), digest)

    def counts(self) -> dict[str, int]:
        counts = {outcome: 0 for outcome in OUTCOMES}
        for outcome in self.done.values():
            counts[outcome] += 1
        return counts


def store_dataset(ws: Workspace, query: ItemQuery | None = None, limit: int | None = None) -> StoreDataset:
    """Items of the store; without a status in the query, only those in play (not excluded or rejected)."""
    return StoreDataset(ws.store, in_play(query), limit, ws.root)


def prepare_run(ws: Workspace, request: RunRequest, first: int | None = None, views: bool = False) -> PreparedRun:
    """Open (or resume) the run folder, select the items and build the requests still to send;
    with `first`, items are read only until that many requests are to send (`PreparedRun.stream_jobs`
    reads the rest); with `views`, store items are read as `AnswerView`s (answered here, never sent)."""
    spec = request.spec
    prompt = get_prompt(request.prompt_name, spec)
    dataset = request.dataset or store_dataset(ws)
    config = run_config(spec, prompt, request.variant, dataset)
    run_id, run_dir = _open_run_dir(ws, request, config)
    selection = _Selection(dataset, spec, request.variant, run_cells(run_dir), request.retry_errors, views)
    before = read_answer_manifest(run_dir) if (run_dir / "manifest.json").exists() else None

    def describe(item_ids: list[str], skipped: dict[str, str]) -> None:
        manifest = RunManifest(
            run_id=run_id, kind="answers", created_at=(before and before.created_at) or now_iso(),
            config_hash=config_hash(config), model=ModelRef.model_validate(spec.model_dump(mode="json")),
            prompt=PromptRef(name=prompt.name, version=prompt.version), variant=request.variant,
            config=RunConfig.model_validate(config), dataset=DatasetRef.model_validate(dataset.describe()),
            item_ids=item_ids, skipped=skipped, workspace=str(ws.root),
        )
        if manifest != before:  # a rerun with nothing new leaves the manifest as it was
            write_manifest(run_dir, manifest)

    images = ImageResolver(ws.blobs)
    book = VerdictBook.read(run_dir)  # people's verdicts: a re-sent unchanged response keeps its person's

    def job_for(item: Item, digest: str) -> Job:
        chat = build_request(item, prompt, images, request.variant)
        return Job(item.id, chat, cache_key(spec, chat, prompt.version), _finisher(item, digest, book))

    run = PreparedRun(run_id, run_dir, selection, job_for, describe)
    while first is not None and not selection.complete and len(selection.to_ask) < first:
        selection.read(first - len(selection.to_ask))
    if first is None or selection.complete:
        run.read_rest()
    return run


def run_model(ws: Workspace, request: RunRequest,
              on_start: Callable[[int, int], None] | None = None,
              on_record: Callable[[dict[str, Any]], None] | None = None) -> RunSummary:
    """Run one model over the selected items in this process; resumable; returns the counts of this run."""
    with pool_thresholds():
        return _run_model(ws, request, on_start, on_record)


def _run_model(ws: Workspace, request: RunRequest, on_start: Callable[[int, int], None] | None,
               on_record: Callable[[dict[str, Any]], None] | None) -> RunSummary:
    from evaluation.local_answers import answer_locally, local_chooser

    started = time.perf_counter()
    choose = local_chooser(request.spec)
    # a model that is asked has its first requests out while the rest of its items are read
    run = prepare_run(ws, request, first=None if choose is not None else FEED_CHUNK, views=choose is not None)
    stats: dict[str, Any] = {}
    prepared = time.perf_counter()
    ready = None if run.complete else asyncio.Event()  # set once the manifest is written: no record is logged before

    def begin() -> None:
        if on_start is not None:
            on_start(len(run.item_ids), run.done_before)
        if ready is not None:
            ready.set()

    if run.complete:
        begin()
    if choose is not None:
        if run.to_ask:
            log = RunLog(run.run_dir / RESPONSES)
            try:
                stats = answer_locally(run.to_ask, choose, request.variant == "question_only", log, on_record)
            finally:
                log.close()
    elif run.to_ask or not run.complete:
        cache_path = ws.cache_path if request.use_cache else None
        jobs = run.jobs() if run.complete else run.stream_jobs(begin)
        try:
            stats = asyncio.run(send_jobs(request.spec, request.settings, run.run_dir / RESPONSES, jobs,
                                         cache_path, on_record, ready)).__dict__
        finally:
            if not run.complete:  # stopped before all was read (backend unreachable, ^C): the run is still described
                run.read_rest()
    stats.update(prepare_s=round(prepared - started, 3), execute_s=round(time.perf_counter() - prepared, 3))
    counts = run.counts()
    for outcome, count in stats.get("by_outcome", {}).items():
        counts[outcome] = counts.get(outcome, 0) + count
    stats["changed_since"] = run.changed
    return RunSummary(run.run_id, run.run_dir, len(run.item_ids), run.done_before, counts, run.skipped, stats)


def _finisher(item: Item, digest: str, book: VerdictBook | None = None
              ) -> Callable[[Job, Completion | None, BackendError | None, dict[str, Any]], dict[str, Any]]:
    def finish(job: Job, completion: Completion | None, error: BackendError | None, meta: dict[str, Any]) -> dict[str, Any]:
        record = AnswerRecord.model_validate({"item_id": item.id, "content_hash": digest, "gold": item.gold(),
                                              **score(item, completion, error), **meta, "ts": now_iso()})
        line = record.model_dump(exclude_none=True)
        return book.apply(line) if book else line

    return finish
