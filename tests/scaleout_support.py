"""Helpers shared by the executor tests: what must be identical between executors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.core.workspace import Workspace
from evaluation.runlog import RESPONSES, read_records

VOLATILE = ("ts", "latency_s")  # when and how fast: the only fields allowed to differ


def run_results(ws: Workspace) -> dict[str, dict[str, dict[str, Any]]]:
    """run id → item id → its record without the volatile fields."""
    return {run.name: {item_id: {k: v for k, v in record.items() if k not in VOLATILE}
                       for item_id, record in read_records(run / RESPONSES).items()}
            for run in sorted(ws.runs_dir.iterdir()) if (run / RESPONSES).is_file()}


def log_lines(run_dir: Path) -> int:
    return sum(1 for line in (run_dir / RESPONSES).read_text(encoding="utf-8").splitlines() if line.strip())


def stored_items(ws: Workspace) -> dict[str, dict[str, Any]]:
    """item id → its record, and the blobs it references exist in the workspace."""
    items = {stored.item.id: stored.item.to_record() for stored in ws.store.iter_items()}
    for record in items.values():
        refs = [image["blob"] for image in record.get("images") or []]
        refs += [option["image"]["blob"] for option in record["options"] if option.get("image")]
        assert all(ws.blobs.exists(ref) for ref in refs)
    return items


def truth_questions(pdfs: list[Path]) -> int:
    """The questions the sample PDFs hold, counted in their ground-truth files."""
    from curation.sample_exam import truth_path_for

    return sum(len(truth_path_for(pdf).read_text(encoding="utf-8").splitlines()) for pdf in pdfs)


def write_sample_pdfs(folder: Path, seeds: range) -> list[Path]:
    from curation.sample_exam import write_sample_exam

    return [write_sample_exam(folder / f"exam-{seed:02d}.pdf", seed=seed)[0] for seed in seeds]
