"""The workspace: a folder holding the config, the store, blobs, the response cache, run logs
and releases. Every command finds it from `--workspace/-w` or `BENCHSMITH_WORKSPACE`."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from curation.core.blobs import BlobStore
from curation.core.credentials import (
    PASSWORD_ENV,
    PASSWORD_FILE,
    split_password,
    with_password,
    write_password_file,
)
from curation.core.errors import WorkspaceError
from curation.core.store import Store

CONFIG_NAME = "benchsmith.toml"
ENV_VAR = "BENCHSMITH_WORKSPACE"
DEFAULT_DB = "sqlite:///{root}/store.db"


@dataclass
class Workspace:
    root: Path
    db_url: str
    name: str
    vlm_model: str | None = None  # [extract] vlm_model: the vision model extraction falls back to
    pool_size: int | None = None  # the store's connection pool (Store); None: SQLAlchemy's default
    judge_model: str | None = None  # [judge] model: the answer judge `run`, `evaluate` and `runs import` call
    judge_all: bool = False  # [judge] all: every response judged (KMMMU's protocol), not only the undecided

    @property
    def blobs_dir(self) -> Path:
        return self.root / "blobs"

    @property
    def cache_path(self) -> Path:
        return self.root / "cache.db"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def releases_dir(self) -> Path:
        return self.root / "releases"

    @cached_property
    def store(self) -> Store:
        return Store(self.db_url, pool_size=self.pool_size)

    def with_pool(self, pool_size: int) -> Workspace:
        """The same workspace whose store keeps `pool_size` connections (a server's threads)."""
        return replace(self, pool_size=pool_size)

    @cached_property
    def blobs(self) -> BlobStore:
        return BlobStore(self.blobs_dir)


def _config_text(name: str, db_url: str | None, password_file: str | None) -> str:
    url_line = f'url = "{db_url}"' if db_url else '# url = "postgresql+psycopg://user@127.0.0.1/benchsmith"  (default: store.db here)'
    password_line = (f'password_file = "{password_file}"  # mode 0600; or set {PASSWORD_ENV}\n' if password_file
                     else f"# the password: set {PASSWORD_ENV}, or password_file = \"{PASSWORD_FILE}\" (mode 0600)\n")
    return (
        "# benchsmith workspace\n"
        "[workspace]\n"
        f'name = "{name}"\n\n'
        "[store]\n"
        f"{url_line}\n"
        f"{password_line}\n"
        "# [extract]\n"
        "# vlm_model = \"openai-compatible:MODEL@http://127.0.0.1:8000/v1?vision=true\"  "
        "(pages with broken fonts or many formulas read by this vision model)\n\n"
        "# [judge]\n"
        "# model = \"openai-compatible:MODEL@http://127.0.0.1:8000/v1\"  "
        "(judges the answers no checker decides, after run, evaluate and runs import)\n"
        "# all = false  (true: every answer judged too, for comparison; the checkers' verdicts stand)\n"
    )


def init_workspace(root: Path, db_url: str | None = None) -> Workspace:
    """Create a workspace. A password in `db_url` goes to `.db-password` (mode 0600), never
    into the world-readable benchsmith.toml."""
    root = Path(root).resolve()
    config = root / CONFIG_NAME
    if config.exists():
        raise WorkspaceError(f"{root} is already a workspace ({CONFIG_NAME} exists)")
    root.mkdir(parents=True, exist_ok=True)
    for folder in ("blobs", "runs", "releases"):
        (root / folder).mkdir(exist_ok=True)
    stored_url, password = split_password(db_url) if db_url else (None, None)
    url = with_password(db_url, None) if db_url else DEFAULT_DB.format(root=root.as_posix())
    Store(url, create=True).close()
    _touch_cache(root / "cache.db")
    if password:
        write_password_file(root / PASSWORD_FILE, password)
    config.write_text(_config_text(root.name, stored_url, PASSWORD_FILE if password else None), encoding="utf-8")
    return Workspace(root, url, root.name)


def _touch_cache(path: Path) -> None:
    import sqlite3

    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.close()


def resolve_root(path: str | os.PathLike | None) -> Path:
    chosen = path or os.environ.get(ENV_VAR)
    if not chosen:
        raise WorkspaceError(f"no workspace given: pass --workspace DIR or set {ENV_VAR}")
    return Path(chosen).resolve()


def open_workspace(path: str | os.PathLike | None) -> Workspace:
    root = resolve_root(path)
    config = root / CONFIG_NAME
    if not config.is_file():
        raise WorkspaceError(f"{root} is not a benchsmith workspace (no {CONFIG_NAME}; run `benchsmith init {root}`)")
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise WorkspaceError(f"{config}: malformed config: {error}") from None
    store = data.get("store", {})
    workspace = data.get("workspace", {})
    extract = data.get("extract", {})
    judge = data.get("judge", {})
    if not all(isinstance(table, dict) for table in (store, workspace, extract, judge)):
        raise WorkspaceError(f"{config}: [store], [workspace], [extract] and [judge] must be tables")
    vlm_model = extract.get("vlm_model")
    if vlm_model is not None and not (isinstance(vlm_model, str) and vlm_model.strip()):
        raise WorkspaceError(f"{config}: extract.vlm_model must be a model spec (a string)")
    judge_model, judge_all = judge.get("model"), judge.get("all", False)
    if judge_model is not None and not (isinstance(judge_model, str) and judge_model.strip()):
        raise WorkspaceError(f"{config}: judge.model must be a model spec (a string)")
    if not isinstance(judge_all, bool):
        raise WorkspaceError(f"{config}: judge.all must be true or false")
    url = store.get("url") or DEFAULT_DB.format(root=root.as_posix())
    password_file = store.get("password_file", PASSWORD_FILE)
    if not isinstance(url, str) or not isinstance(password_file, str):
        raise WorkspaceError(f"{config}: store.url and store.password_file must be strings")
    return Workspace(root, with_password(url, root / password_file), str(workspace.get("name", root.name)), vlm_model,
                     judge_model=judge_model, judge_all=judge_all)


def user_data_dir() -> Path:
    """benchsmith's per-user data folder: `$XDG_DATA_HOME/benchsmith` (default `~/.local/share/benchsmith`)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "benchsmith"


def user_workspace(name: str) -> Workspace:
    """The per-user workspace `name` under `user_data_dir()`, created on first use: for commands
    that need a workspace only to keep their runs, cache and reports (`evaluate --release`)."""
    root = (user_data_dir() / name).resolve()
    if not (root / CONFIG_NAME).is_file():
        try:
            return init_workspace(root)
        except WorkspaceError:  # another process created it meanwhile
            if not (root / CONFIG_NAME).is_file():
                raise
    return open_workspace(root)
