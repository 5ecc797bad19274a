"""Who may reach the server at all: an ASGI gate in front of Gradio and our own routes.

- With users: everything but the login page (its HTML, scripts, styles, fonts and POST
  /login) needs a signed-in session; `/openapi.json`, `/config` and the queue included.
  A login for a locked-out name is answered 429 with how long the lockout lasts, and the
  login page gets a small script that shows that message (Gradio's form only knows 400).
- With no users (loopback only): a random token, printed in the URL as Jupyter does
  (`/?token=…`). Opening that URL sets an HttpOnly session cookie and redirects to `/`;
  without the cookie every request, the page included, is refused.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_COOKIE = "bs-local-session"
LOGIN_PAGE_PREFIXES = ("/static/", "/assets/")
LOGIN_PAGE_PATHS = {"/", "/theme.css", "/favicon.ico", "/login", "/login/"}

LOGIN_SCRIPT = """<script>
(() => {
  const plain = window.fetch.bind(window);
  window.fetch = async (...args) => {
    const response = await plain(...args);
    const target = args[0] && args[0].url ? args[0].url : String(args[0]);
    if (response.status === 429 && /\\/login\\/?$/.test(new URL(target, location.href).pathname)) {
      const detail = (await response.clone().json()).detail;
      let banner = document.getElementById("bs-login-error");
      if (!banner) {
        banner = document.createElement("div");
        banner.id = "bs-login-error";
        banner.setAttribute("role", "alert");
        banner.style.cssText = "position:fixed;top:12px;left:50%;transform:translateX(-50%);z-index:9999;" +
          "background:#fef2f2;color:#991b1b;border:2px solid #b91c1c;padding:10px 16px;font-weight:600;";
        document.body.appendChild(banner);
      }
      banner.textContent = detail;
    }
    return response;
  };
})();
</script>"""

NEEDS_TOKEN_PAGE = (
    "<!doctype html><meta charset=utf-8><title>benchsmith annotator</title>"
    "<p>토큰이 필요합니다 · This annotator needs its token: open the URL with <code>?token=…</code> "
    "that <code>benchsmith annotate</code> printed when it started.</p>")


def lockout_message(seconds_left: float) -> str:
    minutes = max(1, round(seconds_left / 60))
    return (f"로그인이 잠겼습니다 · Locked out after too many failed logins: try again in {minutes} "
            f"minute{'s' if minutes != 1 else ''}")


class SessionGate:
    """`signed_in(cookies)` says whether a Gradio session cookie is valid; `locked_for(name)`
    gives the seconds a name stays locked (None when it is not). `token` switches to local mode."""

    def __init__(self, app: ASGIApp, *, signed_in: Callable[[dict[str, str]], bool],
                 locked_for: Callable[[str], float | None], token: str | None = None):
        self.app, self.signed_in, self.locked_for, self.token = app, signed_in, locked_for, token
        self.local_session = secrets.token_urlsafe(32)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        cookies = _cookies(scope)
        if scope["type"] == "websocket":
            local = self.token is not None and hmac.compare_digest(cookies.get(LOCAL_COOKIE, ""), self.local_session)
            if local or (self.token is None and self.signed_in(cookies)):
                await self.app(scope, receive, send)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if self.token is not None:
            await self._local(scope, receive, send, cookies)
            return
        path, method = scope["path"], scope.get("method", "GET")
        if path in ("/login", "/login/") and method == "POST":
            await self._login(scope, receive, send)
        elif self.signed_in(cookies):
            await self.app(scope, receive, send)
        elif path in LOGIN_PAGE_PATHS or path.startswith(LOGIN_PAGE_PREFIXES):
            await (self._with_login_script(scope, receive, send) if path == "/" else self.app(scope, receive, send))
        else:
            await _respond(send, 401, json.dumps({"detail": "log in first"}), "application/json")

    async def _local(self, scope: Scope, receive: Receive, send: Send, cookies: dict[str, str]) -> None:
        offered = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        if offered and hmac.compare_digest(offered, self.token or ""):
            cookie = f"{LOCAL_COOKIE}={self.local_session}; HttpOnly; SameSite=Strict; Path=/"
            await _respond(send, 302, "", "text/plain", [(b"location", b"/"), (b"set-cookie", cookie.encode())])
        elif hmac.compare_digest(cookies.get(LOCAL_COOKIE, ""), self.local_session):
            await self.app(scope, receive, send)
        else:
            await _respond(send, 401, NEEDS_TOKEN_PAGE, "text/html; charset=utf-8")

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request

        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break

        async def replay() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            name = str((await Request(scope, replay).form()).get("username") or "").strip()
        except Exception:  # a malformed form: let Gradio answer it
            name = ""
        seconds = self.locked_for(name) if name else None
        if seconds is not None:
            await _respond(send, 429, json.dumps({"detail": lockout_message(seconds)}, ensure_ascii=False),
                           "application/json; charset=utf-8")
            return
        await self.app(scope, replay, send)

    async def _with_login_script(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The login page, with the script that shows a lockout message."""
        start: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(chunks)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            if any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers):
                page = page.replace(b"</head>", LOGIN_SCRIPT.encode() + b"</head>", 1)
            await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, capture)


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
