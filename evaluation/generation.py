"""A model client for curation steps (paraphrase, Korea detection, rationale drafts), on the
same runners as evaluation: every request is cached, logged append-only and resumable."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from curation.core.item import Item
from curation.core.store import ItemQuery
from curation.core.workspace import Workspace
from curation.llm import SolvedItem, TextRequest, TextResult
from evaluation.backends.base import (
    REFUSED_REASONS,
    TRUNCATED_REASONS,
    BackendError,
    ChatRequest,
    Completion,
    ImagePart,
    Message,
    Part,
)
from evaluation.cache import cache_key
from evaluation.metrics import load_run
from evaluation.models import ModelConfigError, ModelSpec, resolve_model
from evaluation.records import GenerationManifest, GenerationRecord, ModelRef, read_jsonl_records
from evaluation.runlog import RESPONSES, now_iso, write_manifest
from evaluation.runner import RunRequest, run_model, store_dataset
from evaluation.sender import Job, SenderSettings, send_jobs


class RunnerTextModel:
    """`fresh`: ask the model again, reusing neither cached responses nor the run log's earlier
    answers (after a refusal or answers that were no use, which are otherwise kept like any answer)."""

    def __init__(self, ws: Workspace, spec: ModelSpec, concurrency: int = 8, fresh: bool = False):
        self.ws = ws
        self.spec = spec
        self.name = spec.name
        self.fresh = fresh
        self.settings = SenderSettings(concurrency=concurrency, timeout_s=spec.timeout_s, max_retries=spec.max_retries)

    def _run_dir(self, purpose: str) -> Path:
        digest = hashlib.sha256(json.dumps([self.spec.identity(), self.spec.decoding.model_dump()],
                                           sort_keys=True).encode()).hexdigest()[:10]
        slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in self.spec.name)[:40]
        run_dir = self.ws.runs_dir / f"gen-{purpose}-{slug}-{digest}"
        if not (run_dir / "manifest.json").exists():
            write_manifest(run_dir, GenerationManifest(run_id=run_dir.name, kind="generation", purpose=purpose,
                                                       created_at=now_iso(),
                                                       model=ModelRef.model_validate(self.spec.model_dump(mode="json"))))
        return run_dir

    def _seeded(self, attempt: int) -> ModelSpec:
        """Attempt k samples with seed + k, so a retry is a new sample, not the cached one."""
        if not attempt or self.spec.decoding.seed is None:
            return self.spec
        decoding = self.spec.decoding.model_copy(update={"seed": self.spec.decoding.seed + attempt})
        return self.spec.model_copy(update={"decoding": decoding})

    def generate(self, requests: list[TextRequest], purpose: str) -> dict[str, TextResult]:
        run_dir = self._run_dir(purpose)
        log_key = lambda request: f"{request.key}#{request.attempt}"  # noqa: E731
        done = read_jsonl_records(run_dir / RESPONSES, GenerationRecord, key="job")
        jobs_by_attempt: dict[int, list[Job]] = {}
        if any(request.images for request in requests) and not self.spec.capabilities.vision:
            raise ModelConfigError(f"model {self.spec.name!r} is not declared with vision: add ?vision=true to the "
                                   "spec or capabilities.vision to its YAML")
        for request in requests:
            chat = self.chat_request(request, run_dir)
            key = cache_key(self._seeded(request.attempt), chat, purpose)
            previous = done.get(log_key(request))
            if not self.fresh and previous is not None and previous.text is not None and previous.key == key:
                continue  # the same request (same item text) was answered: an edited item is asked again
            jobs_by_attempt.setdefault(request.attempt, []).append(Job(log_key(request), chat, key, _finish))
        for attempt, jobs in sorted(jobs_by_attempt.items()):
            asyncio.run(send_jobs(self._seeded(attempt), self.settings, run_dir / RESPONSES, jobs,
                                 None if self.fresh else self.ws.cache_path))
        if jobs_by_attempt:
            done = read_jsonl_records(run_dir / RESPONSES, GenerationRecord, key="job")
        results = {}
        for request in requests:
            record = done.get(log_key(request)) or GenerationRecord(job=log_key(request))
            results[request.key] = TextResult(request.key, record.text, record.error)
        return results

    @staticmethod
    def chat_request(request: TextRequest, run_dir: Path) -> ChatRequest:
        """The chat a backend sends: the system text, then the pictures (kept as files under the
        run folder, named by sha256) and the user text; each backend encodes the pictures its way."""
        user: tuple[Part, ...] = (*(_image_part(run_dir, png) for png in request.images), request.user)
        return ChatRequest((Message("system", (request.system,)), Message("user", user)),
                           response_schema=request.json_schema, salt=request.attempt)

    def solve_with_rationale(self, items: list[Item], attempt: int) -> dict[str, SolvedItem]:
        """The reasoning prompt (free scratchpad, then JSON with rationale and answer); attempt k
        uses seed + k so a retry is a new sample, not the cached one."""
        dataset = store_dataset(self.ws, ItemQuery(ids=[i.id for i in items]))
        summary = run_model(self.ws, RunRequest(self._seeded(attempt), "reasoning", "implicit", dataset,
                                                settings=self.settings))
        run = load_run(summary.run_dir, self.ws)  # current records only: never an answer to an older version
        return {item_id: SolvedItem(item_id, record.answer, record.rationale, record.outcome)
                for item_id, record in run.records.items()}


def _image_part(run_dir: Path, png: bytes) -> ImagePart:
    sha = hashlib.sha256(png).hexdigest()
    path = run_dir / "images" / f"{sha}.png"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(png)
        os.replace(partial, path)
    return ImagePart(path, sha, "image/png")


def _finish(job: Job, completion: Completion | None, error: BackendError | None, meta: dict[str, Any]) -> dict[str, Any]:
    """The log line of one request: a `GenerationRecord` with the keys this outcome has."""
    if completion is None:
        record = GenerationRecord(job=job.id, text=None, error=str(error) if error else "error", **meta, ts=now_iso())
    else:
        unusable = _unusable(completion)
        record = GenerationRecord(job=job.id, text=None if unusable else completion.text, error=unusable,
                                  finish_reason=completion.finish_reason, usage=completion.usage, **meta, ts=now_iso())
    return record.model_dump(mode="json", exclude_unset=True)


def _unusable(completion: Completion) -> str | None:
    """Why a completion's text is no answer (a refusal, a cut-off), or None when it is one."""
    if completion.finish_reason in REFUSED_REASONS:
        said = completion.text.strip()[:160]
        return f"the model refused ({completion.finish_reason})" + (f": {said}" if said else "")
    if completion.finish_reason in TRUNCATED_REASONS:
        return "the response was cut off at the token limit (raise max_tokens)"
    return None


def client_factory(spec_text: str, ws: Workspace, fresh: bool = False) -> RunnerTextModel:
    return RunnerTextModel(ws, resolve_model(spec_text, ws.root / "models.yaml"), fresh=fresh)
