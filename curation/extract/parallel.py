"""Many PDFs on an executor: each PDF is one shard, read and segmented on a worker; the driver
writes the blobs and items of each PDF (one store transaction per PDF) exactly as a local run does.

A worker gets the PDF's bytes and file name (nothing of the workspace) and returns the
`Extraction` (items and crop bytes) or the PDF's error; the file name matters because it names
the exam by default and is kept as the item's origin.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace
from curation.execution.executors import Shard, ShardExecutor
from curation.execution.shard_driver import DEFAULT_MAX_ATTEMPTS, ShardProgress, drive
from curation.extract.key_sheet import KeyInput
from curation.extract.pipeline import Extraction, ExtractOptions, extract_items, write_extraction
from curation.extract.report import PdfReport

_PDF_MARK = "\x00pdf\x00"  # the worker's temporary path in an error, put back as the driver's path


@dataclass(frozen=True)
class PdfShard:
    name: str
    data: bytes
    options: ExtractOptions
    key: KeyInput | None


def extract_shard(shard: PdfShard) -> Iterator[Extraction | PdfReport]:
    """Worker side: the PDF's extraction, or a report holding its error (a bad PDF is not retried)."""
    with tempfile.TemporaryDirectory(prefix="benchsmith-pdf-") as folder:
        path = Path(folder) / shard.name
        path.write_bytes(shard.data)
        try:
            extraction = extract_items(path, shard.options, shard.key)
        except BenchsmithError as error:  # PdfError, OcrError: this file only
            yield PdfReport(shard.name, error=str(error).replace(str(path), _PDF_MARK))
            return
    yield extraction


def pdf_shards(pdfs: list[Path], options: ExtractOptions, key: KeyInput | None) -> tuple[list[Shard], dict[str, PdfReport]]:
    """One shard per readable PDF, keyed by its position and name; unreadable files get their report here."""
    shards: list[Shard] = []
    unread: dict[str, PdfReport] = {}
    for index, pdf in enumerate(pdfs):
        shard_key = f"{index:04d}:{pdf.name}"
        try:
            data = pdf.read_bytes()
        except OSError as error:
            unread[shard_key] = PdfReport(str(pdf), error=f"{pdf}: cannot read: {error.strerror}")
            continue
        shards.append(Shard(shard_key, extract_shard, PdfShard(pdf.name, data, options, key), 1))
    return shards, unread


def extract_many(pdfs: list[Path], workspace: Workspace, options: ExtractOptions, key: KeyInput | None,
                 executor: ShardExecutor, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 on_progress: Callable[[ShardProgress], None] | None = None) -> list[PdfReport]:
    """Extract every PDF on `executor`; reports in the order of `pdfs`. Only this process writes."""
    shards, reports = pdf_shards(pdfs, options, key)
    paths = {shard.key: str(pdfs[int(shard.key.split(":", 1)[0])]) for shard in shards}

    def handle(shard: Shard, result: Extraction | PdfReport) -> int:
        if isinstance(result, Extraction):
            result.report.path = paths[shard.key]
            reports[shard.key] = write_extraction(result, workspace, options)
        else:
            result.path = paths[shard.key]
            result.error = (result.error or "").replace(_PDF_MARK, paths[shard.key])
            reports[shard.key] = result
        return 1

    outcome = drive(executor, shards, handle, lambda shard: None if shard.key in reports else shard,
                    max_attempts=max_attempts, on_progress=on_progress)
    for shard_key, error in outcome.failed.items():
        reports[shard_key] = PdfReport(paths[shard_key], error=f"{paths[shard_key]}: worker failed: {error}")
    return [reports[shard_key] for shard_key in sorted(reports)]
