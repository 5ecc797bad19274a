"""Who may reach the server at all: an ASGI gate in front of Gradio and our own routes.

- Every request, in both modes: one that comes from another origin (its Origin header, or for
  a state-changing method its Referer when Origin is absent, names another host:port than the
  Host it was sent to) is refused with 403, and no response carries CORS headers. A page on
  another port of 127.0.0.1 can neither post to the app nor read it with the user's cookies.
  Requests with neither header (curl, gradio_client) are not cross-site and pass.
- With users: without a session only the login page (GET /, our own: see login_page.py) and
  POST /login are served; everything else, Gradio's page, config, API info, assets and queue
  included, is 401. POST /login is throttled (throttle.py) and opens a session (sessions.py);
  POST /logout ends it (GET is 405: an <img> cannot log anyone out).
- With no users (loopback only): a random token, printed in the URL as Jupyter does
  (`/?token=…`). Opening that URL sets an HttpOnly session cookie and redirects to `/`;
  without the cookie every request, the page included, is refused.
- Every request: a Host header that names none of the allowed hosts (settings.allowed_hosts;
  by default the local names and the address the server binds) is refused with 400, so that a
  page on a name that resolves here (DNS rebinding) reaches nothing; a body past the size limits
  (limits.py: uploads apart) is refused with 413 before anything reads it.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import secrets
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from annotator.review.limits import Limits, too_large_message
from annotator.review.request_context import request_login, request_user
from annotator.screens.login_page import login_page, login_page_headers
from annotator.web.sessions import COOKIE, Sessions, session_id
from annotator.web.throttle import LoginThrottle, backoff_message

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_COOKIE = "bs-local-session"
USER_KEY = "benchsmith_user"  # the signed-in user, in scope["state"] (request.state) for the app
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOGIN_PATHS = {"/login", "/login/"}
LOGOUT_PATHS = {"/logout", "/logout/"}
MAX_LOGIN_BODY = 16 * 1024
UPLOAD_PATHS = ("/gradio_api/upload", "/upload")

NEEDS_TOKEN_PAGE = (
    "<!doctype html><meta charset=utf-8><title>benchsmith annotator</title>"
    "<p>토큰이 필요합니다 · This annotator needs its token: open the URL with <code>?token=…</code> "
    "that <code>benchsmith annotate</code> printed when it started.</p>")


def scope_user(state: Any) -> str | None:
    """The user the gate let in, from a request's state (None in local mode)."""
    return getattr(state, USER_KEY, None)


class Logins:
    """What the gate needs for users: who may log in, how often, and their sessions."""

    def __init__(self, check_password: Callable[[str, str], bool], throttle: LoginThrottle, sessions: Sessions,
                 on_logout: Callable[[str, str], None] = lambda user, login: None):
        self.check_password, self.throttle, self.sessions = check_password, throttle, sessions
        self.on_logout = on_logout  # what ending a login session (user, its id) releases: its reservations, pages


class SessionGate:
    """`logins` for a server with users; `token` (and no logins) for local mode."""

    def __init__(self, app: ASGIApp, *, logins: Logins | None = None, token: str | None = None,
                 hosts: frozenset[str] | None = None, limits: Limits | None = None):
        assert (logins is None) != (token is None), "either users (logins) or local mode (token)"
        self.app, self.logins, self.token = app, logins, token
        self.hosts, self.limits = hosts, limits or Limits()
        self.local_session = secrets.token_urlsafe(32)
        self._client_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.hosts is not None and host_name(scope) not in self.hosts:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _respond(send, 400, json.dumps({"detail": "허용되지 않은 호스트입니다 · Host not allowed: "
                                                                "add it to annotator.allowed_hosts in benchsmith.toml"},
                                                     ensure_ascii=False), "application/json; charset=utf-8")
            return
        if from_other_origin(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _respond(send, 403, json.dumps({"detail": "cross-origin request refused"}), "application/json")
            return
        if scope["type"] == "http":
            limit, what, key = ((self.limits.upload_bytes, "the upload", "max_upload_mb")
                                if scope["path"].startswith(UPLOAD_PATHS)
                                else (self.limits.request_bytes, "the request", "max_request_kb"))
            size = _content_length(scope)
            if size is not None and size > limit:
                await _respond(send, 413, json.dumps({"detail": too_large_message(what, size, limit, "bytes", key)},
                                                     ensure_ascii=False), "application/json; charset=utf-8")
                return
            receive = _bounded(receive, limit)
        send = _without_cors(send)
        cookies = _cookies(scope)
        if self.token is not None:
            await self._local(scope, receive, send, cookies)
            return
        path, method = scope["path"], scope.get("method", "GET")
        if scope["type"] == "http" and path in LOGIN_PATHS | LOGOUT_PATHS:
            if method != "POST":
                await _respond(send, 405, json.dumps({"detail": "use POST"}), "application/json",
                               [(b"allow", b"POST")])
            elif path in LOGIN_PATHS:
                await self._login(scope, receive, send)
            else:
                await self._logout(send, cookies)
            return
        user = await asyncio.to_thread(self._user, cookies)
        if user is not None:
            scope.setdefault("state", {})[USER_KEY] = user
            request_user.set(user)
            request_login.set(session_id(cookies[COOKIE]))
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        elif path == "/" and method in ("GET", "HEAD"):
            nonce = secrets.token_urlsafe(16)
            await _respond(send, 200, login_page(nonce), "text/html; charset=utf-8", login_page_headers(nonce))
        else:
            await _respond(send, 401, json.dumps({"detail": "log in first"}), "application/json")

    def _user(self, cookies: dict[str, str]) -> str | None:
        token = cookies.get(COOKIE)
        return self.logins.sessions.user(token) if token and self.logins else None

    async def _local(self, scope: Scope, receive: Receive, send: Send, cookies: dict[str, str]) -> None:
        offered = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        local = hmac.compare_digest(cookies.get(LOCAL_COOKIE, ""), self.local_session)
        if scope["type"] == "websocket":
            await (self.app(scope, receive, send) if local else send({"type": "websocket.close", "code": 1008}))
        elif offered and hmac.compare_digest(offered, self.token or ""):
            cookie = f"{LOCAL_COOKIE}={self.local_session}; HttpOnly; SameSite=Strict; Path=/"
            await _respond(send, 302, "", "text/plain", [(b"location", b"/"), (b"set-cookie", cookie.encode())])
        elif local:
            await self.app(scope, receive, send)
        else:
            await _respond(send, 401, NEEDS_TOKEN_PAGE, "text/html; charset=utf-8")

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request

        assert self.logins is not None
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_LOGIN_BODY:
                await _respond(send, 413, json.dumps({"detail": "login form too large"}), "application/json")
                return
            if not message.get("more_body"):
                break

        async def replay() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            form = await Request(scope, replay).form()
            name, password = str(form.get("username") or "").strip()[:100], str(form.get("password") or "")
        except Exception:  # a malformed form is a failed login
            name, password = "", ""
        client = (scope.get("client") or ("unknown",))[0]
        lock = self._client_locks.setdefault(client, asyncio.Lock())
        async with lock:  # one try at a time per client: a burst cannot slip past the backoff
            wait = await asyncio.to_thread(self.logins.throttle.wait_s, name, client)
            if wait is not None:
                await _respond(send, 429, json.dumps({"detail": backoff_message(wait)}, ensure_ascii=False),
                               "application/json; charset=utf-8", [(b"retry-after", str(math.ceil(wait)).encode())])
                return
            ok = bool(name) and await asyncio.to_thread(self.logins.check_password, name, password)
            await asyncio.to_thread(self.logins.throttle.record, name, client, ok)
        if not ok:
            await _respond(send, 400, json.dumps({"detail": "Incorrect credentials."}), "application/json")
            return
        token = await asyncio.to_thread(self.logins.sessions.start, name)
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Lax; Path=/{secure}"
        await _respond(send, 200, json.dumps({"success": True}), "application/json",
                       [(b"set-cookie", cookie.encode())])

    async def _logout(self, send: Send, cookies: dict[str, str]) -> None:
        assert self.logins is not None
        token = cookies.get(COOKIE)
        user = await asyncio.to_thread(self.logins.sessions.end, token) if token else None
        if user is not None and token:
            await asyncio.to_thread(self.logins.on_logout, user, session_id(token))
        cleared = f"{COOKIE}=; Max-Age=0; HttpOnly; SameSite=Lax; Path=/"
        await _respond(send, 200, json.dumps({"success": True}), "application/json",
                       [(b"set-cookie", cleared.encode())])


def from_other_origin(scope: Scope) -> bool:
    """The request names another origin than the host it was sent to (see the module's note)."""
    headers = {key.lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
    source = headers.get(b"origin")
    unsafe = scope["type"] == "http" and scope.get("method", "GET") not in SAFE_METHODS
    if source is None and unsafe:
        source = headers.get(b"referer")
    if source is None:
        return False
    parts = urlsplit(source)
    return (parts.scheme not in ("http", "https") or not parts.netloc
            or parts.netloc.lower() != headers.get(b"host", "").lower())


def host_name(scope: Scope) -> str:
    """The Host header's name, without its port (an IPv6 address without its brackets), lower-cased."""
    host = next((value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == b"host"), "")
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _bounded(receive: Receive, limit: int) -> Receive:
    """A body sent without Content-Length (chunked) ends as a disconnect once past `limit`: nothing reads it."""
    received = 0

    async def bounded() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        return {"type": "http.disconnect"} if received > limit else message

    return bounded


def _without_cors(send: Send) -> Send:
    """Drop the CORS headers Gradio adds (it reflects localhost origins with credentials)."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [(key, value) for key, value in message.get("headers", [])
                                              if not key.lower().startswith(b"access-control-")]}
        await send(message)

    return sender


def _cookies(scope: Scope) -> dict[str, str]:
    raw = b"; ".join(v for k, v in scope.get("headers", []) if k == b"cookie").decode("latin-1")
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header counts as no session
        return {}
    return {key: morsel.value for key, morsel in jar.items()}


async def _respond(send: Send, status: int, body: str, media: str,
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = body.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", media.encode()), (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})
