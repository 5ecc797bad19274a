"""The release config (YAML): what goes into a release and what its card says."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from curation.core.errors import BenchsmithError, WorkspaceError
from curation.core.item import InPlayStatus, describe_validation_error

ConfigName = Literal["full", "hard", "korea_specific", "multimodal", "reasoning", "explicit", "tiny"]
CONFIG_NAMES: tuple[ConfigName, ...] = get_args(ConfigName)
# built unless the config lists its own; `tiny` needs a subset file, so it is built only when asked for
DEFAULT_CONFIGS: tuple[ConfigName, ...] = tuple(name for name in CONFIG_NAMES if name != "tiny")
VERSION_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")


class ReleaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("benchsmith-exam", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    pretty_name: str = "benchsmith exam benchmark"
    description: str = "Korean national exam questions extracted, reviewed and curated with benchsmith."
    license: str | None = Field(None, description="licence of the release (a Hub licence id or 'other'); by default "
                                "the one licence every row shares, else 'other'")
    source_license: str = Field(
        "Exam content remains the copyright of the issuing agency; use for research and evaluation.",
        description="licence or terms of the source material, for rows whose source has no licence of its own")
    source_licenses: dict[str, str] = Field(
        {}, description="source (the rows' `exam`) → its licence, over what the importer recorded (e.g. "
        "{KMMLU: cc-by-nd-4.0})")
    language: list[str] = ["ko"]
    statuses: list[InPlayStatus] = ["accepted"]
    configs: list[ConfigName] = list(DEFAULT_CONFIGS)
    default_config: str = "full"
    hub_repo: str | None = Field(None, description="ORG/NAME on the Hugging Face Hub (the card's links)")
    canary: str | None = Field(None, description="canary GUID; derived from the name when not given")
    shard_rows: int = Field(1000, ge=1, description="rows per parquet shard (fixed, for reproducible builds)")
    row_group_rows: int = Field(250, ge=1)
    template: str | None = Field(None, description="card template path; default data_cards/default.md")
    citation: str | None = None
    harness_prompt: Literal["standard", "advanced", "reasoning"] = Field(
        "standard", description="benchsmith prompt the harness exports send (as `benchsmith evaluate --prompt`)")
    license_name: str | None = Field(None, description="the licence's name when `license` is 'other'")
    license_link: str | None = Field(None, description="where its text is (a URL or a file in the release)")
    tiny: str | None = Field(None, description="subset file written by `benchsmith analyze subset` (the `tiny` "
                             "config's items and their estimation parameters); relative to the current folder "
                             "or else the workspace")

    @model_validator(mode="after")
    def _tiny_needs_its_subset(self) -> ReleaseConfig:
        if "tiny" in self.configs and not self.tiny:
            raise ValueError("configs lists `tiny` but no `tiny:` subset file (written by `benchsmith analyze subset`)")
        if self.tiny and "tiny" not in self.configs:
            raise ValueError("`tiny:` names a subset file but configs does not list `tiny`")
        return self

    def canary_guid(self) -> str:
        return self.canary or str(uuid.uuid5(uuid.NAMESPACE_URL, f"benchsmith:{self.name}"))


def load_release_config(path: Path | None) -> ReleaseConfig:
    if path is None:
        return ReleaseConfig()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise BenchsmithError(f"{path}: cannot read release config: {error}") from None
    if not isinstance(data, dict):
        raise BenchsmithError(f"{path}: a release config is a YAML mapping")
    try:
        return ReleaseConfig.model_validate(data)
    except ValidationError as error:
        raise BenchsmithError(f"{path}: " + "; ".join(describe_validation_error(error))) from None


def check_version(version: str) -> str:
    version = version.removeprefix("v")
    if not VERSION_PATTERN.match(version):
        raise BenchsmithError(f"version {version!r}: expected X.Y.Z")
    return version


def version_key(version: str) -> tuple[int, int, int]:
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch


def recorded_config(releases_dir: Path, version: str) -> ReleaseConfig:
    """The config a previous release was built with, from its `release.json`."""
    from evaluation.release_records import RELEASE_MANIFEST, ReleaseManifest

    version = check_version(version)
    found = []
    for path in sorted(releases_dir.glob(f"*/{RELEASE_MANIFEST}")):
        try:
            manifest = ReleaseManifest.read(path)
        except WorkspaceError:
            continue
        if manifest.version == version and manifest.config is not None:
            found.append((manifest.name, manifest.config))
    if not found:
        raise BenchsmithError(f"--like v{version}: no release v{version} in {releases_dir}")
    if len({name for name, _ in found}) > 1:
        raise BenchsmithError(f"--like v{version}: several releases have this version ("
                              + ", ".join(sorted(name for name, _ in found)) + "); build with --config")
    try:
        return ReleaseConfig.model_validate(found[0][1])
    except ValidationError as error:
        raise BenchsmithError(f"--like v{version}: its recorded config no longer validates: "
                              + "; ".join(describe_validation_error(error))) from None
