"""Shared set-up for the annotator tests: a real workspace filled with the sample content."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from annotator.review.actions import Reviewer
from annotator.review.render import PdfRenderer
from annotator.review.sample import load_sample
from curation.core.workspace import Workspace, init_workspace

TEAM = (("alice", "admin"), ("carol", "annotator"), ("dave", "annotator"))  # the browser tests' team


@dataclass
class Desk:
    workspace: Workspace
    reviewer: Reviewer
    ids: list[str]


def sample_desk(workspace: Workspace) -> Desk:
    ids = load_sample(workspace)
    return Desk(workspace, Reviewer(workspace.store, PdfRenderer(workspace.blobs)), ids)


def sample_team_workspace(root, passwords: dict[str, str], team=TEAM) -> Workspace:
    """A new workspace at `root` with the sample content and the team's accounts."""
    from annotator.review import auth

    workspace = init_workspace(root)
    load_sample(workspace)
    for name, role in team:
        auth.add_user(workspace.store.engine, name, role, passwords[name])
    return workspace


def fresh_reviewer(desk: Desk) -> Reviewer:
    """A new app instance on the same workspace: what a restarted server or a refreshed page sees."""
    return Reviewer(desk.workspace.store, PdfRenderer(desk.workspace.blobs))


@contextlib.contextmanager
def running_server(workspace: Workspace, **options) -> Iterator[str]:
    """The server the `annotate` command runs, with users (no local mode), on a free loopback port;
    yields its URL. `options` go to create_server."""
    from annotator.web.server import create_server

    with serving_app(create_server(workspace, local_mode=False, **options)) as url:
        yield url


@contextlib.contextmanager
def serving_app(app) -> Iterator[str]:
    """An ASGI app (the annotator's gate) under uvicorn, configured as `annotate` configures it, on a
    free loopback port; yields its URL."""
    import uvicorn

    from annotator.web.server import uvicorn_config

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # held open and handed to the server: no other process can take the port
    server = uvicorn.Server(uvicorn_config(app))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the annotator server stopped while starting"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
