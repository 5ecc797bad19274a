"""The login page, served at / to anyone without a session, and the app's logout call.

It is our own small page, not Gradio's: Gradio's login page embeds the app's API info, whose
dropdown choices name every user, exam and subject. This one names nothing; it posts the form
to /login and reloads into the app once the session cookie is set.
"""

from __future__ import annotations

import html

AUTH_MESSAGE = ("benchsmith 검토 · annotator — 로그인에 거듭 실패하면 다음 시도까지 기다리는 시간이 늘어납니다 · "
                "after repeated failed logins each further try waits longer")

# the logout button's click (pages.py): a POST, so that a link or <img src=/logout> cannot log anyone
# out; then the app's root, the login page, from either page (the expert page is 401 without a session)
LOGOUT_JS = ("() => fetch('logout', {method: 'POST', credentials: 'same-origin'})"
             ".finally(() => window.location.replace('./'))")


def login_page(nonce: str) -> str:
    return f"""<!doctype html>
<html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchsmith 검토 · annotator</title>
<style>
body {{ font-family: system-ui, sans-serif; background: #f6f7f9; display: flex; justify-content: center; margin: 0; }}
main {{ margin-top: 12vh; background: #fff; padding: 24px 28px; border: 1px solid #d8dce3; border-radius: 8px;
        width: min(380px, 90vw); }}
label {{ display: block; margin: 12px 0 4px; font-weight: 600; }}
input {{ width: 100%; box-sizing: border-box; padding: 8px; font-size: 1rem; }}
button {{ margin-top: 16px; width: 100%; padding: 10px; font-size: 1rem; font-weight: 600; }}
#bs-login-error {{ margin-top: 12px; color: #991b1b; background: #fef2f2; border: 2px solid #b91c1c;
                   padding: 8px 12px; font-weight: 600; }}
#bs-login-error:empty {{ display: none; }}
</style></head>
<body><main>
<h1>benchsmith 검토 · annotator</h1>
<p>{html.escape(AUTH_MESSAGE)}</p>
<form id="bs-login" method="post" action="login">
<label for="username">사용자 · Username</label><input id="username" name="username" type="text" autocomplete="username" required autofocus>
<label for="password">비밀번호 · Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Login</button>
<div id="bs-login-error" role="alert"></div>
</form>
</main>
<script nonce="{nonce}">
const form = document.getElementById("bs-login");
const error = document.getElementById("bs-login-error");
form.addEventListener("submit", async (event) => {{
  event.preventDefault();
  error.textContent = "";
  const response = await fetch("login", {{method: "POST", body: new URLSearchParams(new FormData(form)),
                                          credentials: "same-origin"}});
  if (response.ok) {{ window.location.reload(); return; }}
  let detail = "Login failed (" + response.status + ")";
  try {{ detail = (await response.json()).detail || detail; }} catch (ignored) {{}}
  error.textContent = detail;
}});
</script>
</body></html>"""


def login_page_headers(nonce: str) -> list[tuple[bytes, bytes]]:
    policy = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; connect-src 'self'; "
              "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    return [(b"content-security-policy", policy.encode()), (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"same-origin")]
