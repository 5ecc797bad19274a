"""What changed since the previous release, with the reasons recorded in the revisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from curation.core.errors import NotFoundError, WorkspaceError
from curation.core.store import Revision, Store
from evaluation.release_records import RELEASE_MANIFEST as MANIFEST
from evaluation.release_records import ReleaseManifest
from export.release_config import version_key


@dataclass
class Changelog:
    previous: str | None
    added: list[str] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (id, why)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (id, why)

    def as_dict(self) -> dict:
        return {"previous": self.previous, "added": self.added,
                "removed": [{"id": i, "why": w} for i, w in self.removed],
                "changed": [{"id": i, "why": w} for i, w in self.changed]}


def find_previous(releases_dir: Path, name: str, version: str) -> ReleaseManifest | None:
    """The manifest of the newest release of `name` older than `version`, if any (unreadable ones are passed over)."""
    candidates = []
    for path in releases_dir.glob(f"*/{MANIFEST}"):
        try:
            manifest = ReleaseManifest.read(path)
        except WorkspaceError:
            continue
        if manifest.name == name and version_key(manifest.version) < version_key(version):
            candidates.append(manifest)
    return max(candidates, key=lambda m: version_key(m.version), default=None)


def _reason(revision: Revision) -> str:
    """`stage: reason (field, field)`: the changed fields are always named, the reason when given."""
    fields = ", ".join(revision.changed_fields) or "no fields"
    return f"{revision.stage}: {revision.reason} ({fields})" if revision.reason else f"{revision.stage}: {fields}"


def _reasons_since(store: Store, item_id: str, since: str | None) -> str:
    try:
        history = store.history(item_id)
    except NotFoundError:
        return "no longer in the store"
    reasons = [_reason(r) for r in history if since is None or r.created_at > since]
    return "; ".join(dict.fromkeys(reasons)) or "no revision recorded"


def build_changelog(store: Store, previous: ReleaseManifest | None, row_hashes: dict[str, str]) -> Changelog:
    if previous is None:
        return Changelog(None, added=sorted(row_hashes))
    before = previous.row_hashes
    since = previous.store.last_revision_at
    log = Changelog(previous.version)
    log.added = sorted(set(row_hashes) - set(before))
    log.removed = [(item_id, _reasons_since(store, item_id, since)) for item_id in sorted(set(before) - set(row_hashes))]
    log.changed = [(item_id, _reasons_since(store, item_id, since)) for item_id in sorted(set(before) & set(row_hashes))
                   if before[item_id] != row_hashes[item_id]]
    return log
