"""CLI commands of the export package: release build / publish."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.cli import JsonOption, WorkspaceOption, out, print_json, workspace_from

release_app = typer.Typer(help="Build and publish versioned releases.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(release_app, name="release")


@release_app.command("build")
def build_command(
    version: Annotated[str, typer.Option("--version", help="X.Y.Z")],
    config_path: Annotated[Path | None, typer.Option("--config", help="release.yaml")] = None,
    workspace: WorkspaceOption = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="folder to write (default: releases/vX.Y.Z)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Build a release: parquet per config, data card, checksums, Croissant, harness exports."""
    from export.build import build_release
    from export.release_config import load_release_config

    result = build_release(workspace_from(workspace), version, load_release_config(config_path), out_path)
    summary = {"path": str(result.path), "version": result.version, "configs": result.counts,
               "content_hash": result.content_hash, "changelog": result.changelog.as_dict(), "notes": result.notes}
    if as_json:
        print_json(summary)
        return
    out.print(f"release v{result.version}: {result.path}", highlight=False)
    out.print("  " + ", ".join(f"{name} {n}" for name, n in result.counts.items()), highlight=False)
    log = result.changelog
    out.print(f"  changes since {log.previous or '(first release)'}: {len(log.added)} added, "
              f"{len(log.removed)} removed, {len(log.changed)} changed; content hash {result.content_hash[:16]}…",
              highlight=False)
    for note in result.notes:
        out.print(f"  note: {note}", highlight=False)


@release_app.command("publish")
def publish_command(
    path: Annotated[Path, typer.Argument(help="a built release folder")],
    repo: Annotated[str, typer.Option("--repo", help="ORG/NAME on the Hugging Face Hub")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would be uploaded")] = False,
) -> None:
    """Upload a release with huggingface_hub and tag it vX.Y.Z (checksums verified first)."""
    from export.publish import publish

    for line in publish(path, repo, dry_run=dry_run):
        out.print(line, highlight=False, markup=False)
