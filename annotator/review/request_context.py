"""Who the current request is from, as the gate let it in: for what runs inside the request and
cannot be handed it (Gradio's page-session store, the reservation an edit takes). Context
variables: each request, and each worker thread Gradio runs a handler in, sees its own."""

from __future__ import annotations

import contextvars

# the signed-in user (None: local mode, or outside a request)
request_user: contextvars.ContextVar[str | None] = contextvars.ContextVar("benchsmith_request_user", default=None)
# the login session's id (its token's digest, sessions.session_id; '' for local mode and scripts without one)
request_login: contextvars.ContextVar[str] = contextvars.ContextVar("benchsmith_request_login", default="")
