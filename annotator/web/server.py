"""The HTTP server: the Gradio app mounted on FastAPI, plus two routes of our own that serve
images only from the workspace blob store, by hash, to logged-in users:

- /bs/blob/{sha256}.{ext}  a blob (crops); anything that is not a bare hash name is a 404
- /bs/page/{sha256}/{page} a rendered page of the source PDF `{sha256}.pdf`
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import socket
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any

from annotator.web.gradio_import import import_gradio
from curation.core.errors import BenchsmithError, NotFoundError

import_gradio()

import gradio as gr  # noqa: E402
import uvicorn  # noqa: E402
from fastapi import FastAPI, HTTPException, Request  # noqa: E402
from fastapi.responses import Response  # noqa: E402
from starlette.requests import ClientDisconnect  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from annotator.review import auth, claims  # noqa: E402
from annotator.review.actions import Reviewer, Session  # noqa: E402
from annotator.review.limits import TooLarge  # noqa: E402
from annotator.review.queue_specs import ITEM_QUEUES, QUEUES, NotAllowed  # noqa: E402
from annotator.review.render import PdfRenderer, RenderError, warm_up  # noqa: E402
from annotator.review.score_desk import ScoreDesk  # noqa: E402
from annotator.review.tables import ensure_tables  # noqa: E402
from annotator.screens.app import LOCAL_USER, AppContext, build_app  # noqa: E402
from annotator.screens.page_view import page_view_script  # noqa: E402
from annotator.screens.shortcuts import head_script  # noqa: E402
from annotator.screens.views import CSS, LOCAL_TIME_SCRIPT  # noqa: E402
from annotator.web import capacity  # noqa: E402
from annotator.web.edit_relay import DRAFT_URL, edit_relay_script  # noqa: E402
from annotator.web.gate import ASGIApp, Logins, SessionGate, scope_user  # noqa: E402
from annotator.web.session_states import BoundedStateHolder, check_gradio  # noqa: E402
from annotator.web.sessions import Sessions  # noqa: E402
from annotator.web.settings import Settings, read_settings  # noqa: E402
from annotator.web.throttle import LoginThrottle  # noqa: E402
from curation.core.workspace import CONFIG_NAME, Workspace  # noqa: E402

MEDIA_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
               "webp": "image/webp", "svg": "image/svg+xml"}
SAFE_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox",
                "Cache-Control": "private, max-age=86400"}
TOKEN_ENV = "BENCHSMITH_ANNOTATOR_TOKEN"  # fixes the local-mode token (scripts); random otherwise
def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_can_serve(workspace: Workspace, host: str) -> bool:
    """True for local single-user mode (no users, loopback); refuses a public host without users."""
    if auth.user_count(workspace.store.engine):
        return False
    if not is_loopback(host):
        raise BenchsmithError(
            f"refusing to serve on {host} with no users configured: add one with "
            f"`benchsmith users add NAME --role admin -w {workspace.root}` (or serve on 127.0.0.1)")
    return True


def create_server(workspace: Workspace, *, local_mode: bool, token: str | None = None, order: str = "id",
                  settings: Settings | None = None, reservation_s: float | None = None,
                  host: str = "127.0.0.1") -> ASGIApp:
    """The app behind its gate: with `local_mode` only holders of `token` get in (a random one
    when None); with users only signed-in sessions reach anything but the login page.
    `settings`: session lengths, login backoff, page-session bounds, reservations, size limits and
    allowed hosts (the workspace's [annotator] settings when None); `host`: the address it binds."""
    check_gradio()  # refuses to start, naming what is missing, on a Gradio without what we use
    workspace = workspace.with_pool(capacity.pool_size())  # its own store: a connection per worker thread
    ensure_tables(workspace.store.engine)
    renderer = PdfRenderer(workspace.blobs)
    settings = settings or read_settings(workspace.root / CONFIG_NAME)
    # Gradio keeps each page load's state: lean (what handlers changed), bounded per user and in
    # all, dropped at logout or when idle as long as a login session may be (session_states.py)
    pages = BoundedStateHolder(capacity=settings.page_sessions, idle_s=settings.session_idle_s,
                               per_user=settings.page_sessions_per_user)
    reviewer = Reviewer(workspace.store, renderer,
                        settings.reservation_idle_s if reservation_s is None else reservation_s,
                        settings.reservations_per_user, settings.limits)
    ctx = AppContext(workspace, reviewer, ScoreDesk(workspace.store), renderer, local_mode, order=order, pages=pages)
    with gradio_settings(QUEUE_SETTINGS):
        blocks = build_app(ctx)  # no .queue(): it would build Gradio's routes once more (~0.25 s)

    api = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, lifespan=_lifespan)
    user_of = partial(_request_user, local_mode)
    _add_image_routes(api, workspace, renderer, user_of)
    _add_draft_route(api, ctx, user_of)
    app = _mount(api, blocks, ctx, settings)
    pages.set_blocks(blocks)
    gradio_app(api).state_holder = pages
    hosts = settings.hosts(host)
    if local_mode:
        return SessionGate(app, token=token or secrets.token_urlsafe(24), hosts=hosts, limits=settings.limits)
    return SessionGate(app, logins=_logins(workspace, settings, pages), hosts=hosts, limits=settings.limits)


@contextlib.asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    capacity.limit_worker_threads()
    warm_up()  # PyMuPDF, for the first page shown, imported once the server listens
    yield


def _request_user(local_mode: bool, request: Request) -> str:
    if local_mode:
        return LOCAL_USER  # the gate let only the token's holder in
    user = scope_user(request.state)
    if user is None:
        raise HTTPException(status_code=401, detail="log in first")
    return user


def _add_image_routes(api: FastAPI, workspace: Workspace, renderer: PdfRenderer,
                      user_of: Callable[[Request], str]) -> None:
    """/bs/blob/{ref} and /bs/page/{pdf_sha256}/{page}, to logged-in users only."""

    @api.get("/bs/blob/{ref}")
    def blob(ref: str, request: Request) -> Response:
        user_of(request)
        try:
            path = workspace.blobs.path(ref)
        except NotFoundError:
            raise HTTPException(status_code=404, detail="no such blob") from None
        media = MEDIA_TYPES.get(path.suffix.lstrip("."))
        if media is None:
            raise HTTPException(status_code=404, detail="not an image blob")
        return Response(path.read_bytes(), media_type=media, headers=SAFE_HEADERS)

    @api.get("/bs/page/{pdf_sha256}/{page}")
    def page(pdf_sha256: str, page: int, request: Request) -> Response:
        user_of(request)
        try:
            png = renderer.page_png(pdf_sha256, page)
        except (NotFoundError, RenderError):
            raise HTTPException(status_code=404, detail="no such page") from None
        return Response(png, media_type="image/png", headers=SAFE_HEADERS)


def _add_draft_route(api: FastAPI, ctx: AppContext, user_of: Callable[[Request], str]) -> None:
    """The edit relay's last edits when a page goes away (see edit_relay.py): kept, the item released."""
    engine = ctx.workspace.store.engine

    @api.post(DRAFT_URL)
    async def draft(request: Request) -> dict[str, int]:
        user = user_of(request)
        if request.headers.get("x-benchsmith") != "1":  # a cross-site form cannot set it
            raise HTTPException(status_code=403, detail="missing X-Benchsmith header")
        try:
            body = await request.json()
            queue, item_id, rev, path = body["queue"], str(body["item_id"]), int(body["rev"]), str(body["path"])
            value = body["value"] if isinstance(body["value"], str) else ""
            role = "admin" if ctx.local_mode else auth.get_user(engine, user).role
            if queue not in ITEM_QUEUES or role not in QUEUES[queue].roles:
                raise HTTPException(status_code=403, detail=f"{user} may not edit in the {queue!r} queue")
            session = ctx.reviewer.sync(auth.User(user, role), Session(queue, item_id, rev), {path: value},
                                        reserve=False)
            claims.release(engine, user, queue, item_id)
        except ClientDisconnect:  # the page went away before its beacon's body arrived: nothing to keep
            raise HTTPException(status_code=400, detail="the draft's sender went away") from None
        except (KeyError, TypeError, ValueError):
            raise HTTPException(status_code=400, detail=BAD_DRAFT) from None
        except TooLarge as error:
            raise HTTPException(status_code=413, detail=str(error)) from None
        except NotAllowed as error:
            raise HTTPException(status_code=403, detail=str(error)) from None
        except BenchsmithError as error:
            raise HTTPException(status_code=400, detail=str(error)) from None
        return {"edits": len(session.edits)}


def _mount(api: FastAPI, blocks: gr.Blocks, ctx: AppContext, settings: Settings) -> Any:
    """The Gradio app on `api` at /, with our page scripts and styles."""
    head = head_script() + edit_relay_script(ctx.field_ids) + page_view_script() + LOCAL_TIME_SCRIPT
    # run_history=False: Gradio would keep every event's inputs and outputs in the browser's
    # localStorage (item text on a shared machine) and re-serialise that list at every click,
    # which made each click slower the longer a reviewer worked.
    # Logins are the gate's (our login page, sessions in the store): Gradio only learns the user
    # the gate let in, through auth_dependency; its own login page would show the API info.
    with warnings.catch_warnings():  # Gradio warns that a multi-page app gets no SSR, asked for or not
        warnings.filterwarnings("ignore", message="SSR mode is not supported with multi-page apps")
        return gr.mount_gradio_app(api, blocks, path="/", auth_dependency=None if ctx.local_mode else _gate_user,
                                   head=head, css=CSS, footer_links=[], ssr_mode=False, run_history=False,
                                   max_file_size=settings.limits.upload_bytes)


def _logins(workspace: Workspace, settings: Settings, pages: BoundedStateHolder) -> Logins:
    engine = workspace.store.engine

    def logged_out(user: str, login: str) -> None:
        claims.release(engine, user, session=login)  # that login's reservations; other devices keep theirs
        pages.drop_login(user, login)

    return Logins(partial(auth.check_login, engine), LoginThrottle(engine, settings.login_backoff_s),
                  Sessions(engine, settings.session_idle_s, settings.session_max_s), on_logout=logged_out)


BAD_DRAFT = ("잘못된 임시 저장 요청입니다 · Bad draft: send a JSON object with queue, item_id, rev (a number), "
             "path and value")
# Gradio's queue rebuilt a pandas summary of its last 10,000 events at every queued event (the
# script API's calls), for a monitoring page this app does not serve: 13% of the server's CPU under
# a 20-user team, growing with the events kept. Gradio's own settings, read when the Blocks (and its
# queue) are made: never recomputed, few kept.
QUEUE_SETTINGS = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": str(2**62), "GRADIO_ANALYTICS_MAX_EVENTS": "100"}


@contextlib.contextmanager
def gradio_settings(values: dict[str, str]) -> Iterator[None]:
    """Gradio's environment settings while the app is built, restored after (no change to the process's
    environment outlives it)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _gate_user(request: Request) -> str | None:
    return scope_user(request.state)


def gradio_app(api: FastAPI) -> Any:
    """The Gradio app (gradio.routes.App) mounted on the server's FastAPI app."""
    return next(route.app for route in api.routes if isinstance(route, Mount))


GRACEFUL_STOP_S = 5


def uvicorn_config(app: ASGIApp) -> uvicorn.Config:
    """No proxy headers: a client on this machine could otherwise name any address in
    X-Forwarded-For and escape the per-client login backoff."""
    # timeout_graceful_shutdown: a stop (Ctrl-C, SIGTERM) waits at most this long for open
    # connections (a browser tab's event stream stays open) instead of until every tab is closed
    return uvicorn.Config(app, log_level="warning", proxy_headers=False, timeout_graceful_shutdown=GRACEFUL_STOP_S)


def serve(workspace: Workspace, host: str = "127.0.0.1", port: int = 7860, order: str = "id",
          session_idle_minutes: float | None = None, reservation_s: float | None = None) -> None:
    capacity.limit_malloc_arenas()
    ensure_tables(workspace.store.engine)
    local_mode = check_can_serve(workspace, host)
    token = (os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)) if local_mode else None
    settings = read_settings(workspace.root / CONFIG_NAME, session_idle_minutes=session_idle_minutes)
    app = create_server(workspace, local_mode=local_mode, token=token, order=order, settings=settings,
                        reservation_s=reservation_s, host=host)

    # bound here, so that --port 0 gets a free port from the system and the URL printed has it
    try:
        listener = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as error:
        raise BenchsmithError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    port = listener.getsockname()[1]
    if local_mode:
        print(f"annotator (local mode: no users configured; open this URL, the token is the key):\n"
              f"    http://{host}:{port}/?token={token}", flush=True)
    else:
        print(f"annotator: http://{host}:{port}/", flush=True)
    uvicorn.Server(uvicorn_config(app)).run(sockets=[listener])
