"""The store password stays out of benchsmith.toml and out of everything printed."""

from __future__ import annotations

import os
import stat

import pytest

from curation.core.credentials import PASSWORD_ENV, mask_url, split_password
from curation.core.errors import WorkspaceError
from curation.core.workspace import CONFIG_NAME, open_workspace
from tests.conftest import run_cli


def test_mask_and_split_a_url_with_a_password():
    url = "postgresql+psycopg://anna:s3cr%40t-pw@127.0.0.1:54329/bench"
    assert "s3cr" not in mask_url(url) and mask_url(url).startswith("postgresql+psycopg://anna:***@127.0.0.1")
    bare, password = split_password(url)
    assert password == "s3cr@t-pw" and "s3cr" not in bare and bare.startswith("postgresql+psycopg://anna@")
    assert split_password("sqlite:////tmp/x/store.db") == ("sqlite:////tmp/x/store.db", None)


@pytest.mark.postgres
def test_init_keeps_the_password_in_a_0600_file_and_prints_it_nowhere(store_url, tmp_path, monkeypatch):
    if not store_url.startswith("postgresql"):
        pytest.skip("a password needs a server")
    _, password = split_password(store_url)
    root = tmp_path / "team"
    result = run_cli("init", str(root), "--db", store_url, env={PASSWORD_ENV: ""})
    assert result.returncode == 0, result.stderr
    shown = f":{password}@"  # the CI server's password is a common word: look for it in the URL
    assert shown not in result.stdout + result.stderr and ":***@" in result.stdout
    config = (root / CONFIG_NAME).read_text()
    assert shown not in config and f":{password}" not in config and "password_file" in config
    secret = root / ".db-password"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and secret.read_text().strip() == password
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    assert open_workspace(root).store.count() == 0  # connects with the password from the file
    listed = run_cli("items", "stats", "-w", str(root))
    assert listed.returncode == 0 and shown not in listed.stdout + listed.stderr
    os.chmod(secret, 0o644)
    with pytest.raises(WorkspaceError, match="readable by others.*chmod 600"):
        open_workspace(root)
    os.chmod(secret, 0o600)
    secret.write_text("wrong-password\n")
    monkeypatch.setenv(PASSWORD_ENV, password)  # the environment wins over the file
    assert open_workspace(root).store.count() == 0
    monkeypatch.setenv(PASSWORD_ENV, "wrong-password")
    with pytest.raises(WorkspaceError) as refused:
        open_workspace(root).store.count()
    assert "wrong-password" not in str(refused.value) and shown not in str(refused.value)
