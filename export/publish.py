"""Publishing a built release to the Hugging Face Hub: upload the folder, then tag the version."""

from __future__ import annotations

from pathlib import Path

from curation.core.errors import BenchsmithError
from evaluation.release_records import ReleaseManifest
from export.changelog import MANIFEST
from export.integrity import verify_checksums


def release_files(path: Path) -> list[tuple[str, int]]:
    return [(p.relative_to(path).as_posix(), p.stat().st_size) for p in sorted(path.rglob("*")) if p.is_file()]


def check_release(path: Path) -> ReleaseManifest:
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise BenchsmithError(f"{path} is not a built release (no {MANIFEST})")
    broken = verify_checksums(path)
    if broken:
        raise BenchsmithError(f"{path}: files differ from checksums.json: {', '.join(broken[:5])}")
    return ReleaseManifest.read(manifest_path)


def publish(path: Path, repo: str, *, dry_run: bool, token: str | None = None) -> list[str]:
    """Upload and tag; with dry_run, only say what would be uploaded. Returns the lines to print."""
    manifest = check_release(path)
    tag = f"v{manifest.version}"
    files = release_files(path)
    lines = [f"{'would upload' if dry_run else 'uploading'} {len(files)} files "
             f"({sum(size for _, size in files):,} bytes) to datasets/{repo}, then tag {tag}:"]
    lines += [f"  {name}  {size:,} B" for name, size in files]
    if dry_run:
        return lines
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(token=token)
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        commit = api.upload_folder(folder_path=str(path), repo_id=repo, repo_type="dataset",
                                   commit_message=f"benchsmith release {tag}")
        api.create_tag(repo, tag=tag, repo_type="dataset", revision=getattr(commit, "oid", None))
    except (HfHubHTTPError, OSError) as error:
        raise BenchsmithError(f"publishing {path} to {repo} failed: {error}") from None
    return [*lines, f"published {tag}: https://huggingface.co/datasets/{repo}"]
