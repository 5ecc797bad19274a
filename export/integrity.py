"""Integrity files of a release: sha256 per file, a content hash over canonical rows, and a
Croissant check (the Croissant file itself is written by export/croissant.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from curation.core.errors import BenchsmithError


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(root: Path, exclude: tuple[str, ...] = ("checksums.json",),
                    known: dict[str, str] | None = None) -> dict[str, str]:
    """sha256 of every file under `root`, written to checksums.json; `known` digests (files not
    written since) are taken as they are."""
    known = known or {}
    sums = {name: known.get(name) or sha256_file(path)
            for path in sorted(root.rglob("*")) if path.is_file() and path.name not in exclude
            for name in (path.relative_to(root).as_posix(),)}
    (root / "checksums.json").write_text(json.dumps(sums, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return sums


def verify_checksums(root: Path) -> list[str]:
    """Files whose bytes no longer match checksums.json (empty list = intact)."""
    sums = json.loads((root / "checksums.json").read_text(encoding="utf-8"))
    return [name for name, digest in sums.items()
            if not (root / name).is_file() or sha256_file(root / name) != digest]


def content_hash(row_hashes: dict[str, str]) -> str:
    """One hash over the canonical rows (sorted by id): independent of parquet encoding."""
    digest = hashlib.sha256()
    for item_id in sorted(row_hashes):
        digest.update(f"{item_id}\t{row_hashes[item_id]}\n".encode())
    return digest.hexdigest()


def validate_croissant(path: Path) -> list[str]:
    """Problems mlcroissant reports (raises when mlcroissant is not installed)."""
    try:
        import mlcroissant as mlc
    except ImportError:
        raise BenchsmithError("mlcroissant is not installed: pip install 'benchsmith[croissant]'") from None
    try:
        mlc.Dataset(jsonld=str(path))
    except mlc.ValidationError as error:
        return [line for line in str(error).splitlines() if line.strip()]
    return []
