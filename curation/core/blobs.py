"""Content-addressed blob store: `blobs/<sha256>.<ext>`, written once, never overwritten."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from curation.core.errors import NotFoundError, WorkspaceError

_REF = re.compile(r"^([0-9a-f]{64})\.([a-z0-9]{1,5})$")


class BlobStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def put(self, data: bytes, ext: str) -> str:
        ext = ext.lower().lstrip(".")
        ref = f"{hashlib.sha256(data).hexdigest()}.{ext}"
        if not _REF.match(ref):
            raise WorkspaceError(f"bad blob extension {ext!r}")
        path = self.root / ref
        if not path.exists():
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        return ref

    def path(self, ref: str) -> Path:
        """The file of a blob reference; refuses anything that is not a bare hash name."""
        if not _REF.match(ref):
            raise NotFoundError(f"not a blob reference: {ref!r}")
        path = self.root / ref
        if not path.is_file():
            raise NotFoundError(f"blob {ref} is not in {self.root}")
        return path

    def get(self, ref: str) -> bytes:
        return self.path(ref).read_bytes()

    def exists(self, ref: str) -> bool:
        return bool(_REF.match(ref)) and (self.root / ref).is_file()
