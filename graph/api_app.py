"""The API server's HTTP app (langgraph.json's `http.app`, the replica's `http`): its one
middleware masks a key or password pasted into a run's input or resume answer before the
server sees the body. The server keeps a run's input as sent, in its run record and in
the thread's first checkpoint (the input LangGraph writes before any node runs), so no
node or state schema can mask it there; the HTTP request is the one place before both.
The CLI's session masks the request the same way before the graph gets it."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.providers.secrets import redact_tree

# What a client sends to a run (runs.create, .wait, .stream, crons): its input, and the
# answer a resume gives (a revision's words may hold a key too).
_RUN_FIELDS = ("input", "command")


class MaskSecretsInRuns:
    """Pure ASGI middleware: a POST under a `runs` path gets its body with the configured
    secrets (graph/providers/secrets.py) masked in the fields a run stores."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").split("/")
        if scope["type"] != "http" or scope["method"] != "POST" or "runs" not in path:
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                await self.app(scope, _replaying(message, receive), send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        masked = _masked_body(body)
        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(masked)).encode()))
        request: Message = {"type": "http.request", "body": masked, "more_body": False}
        await self.app({**scope, "headers": headers}, _replaying(request, receive), send)


def _replaying(first: Message, receive: Receive) -> Receive:
    """`receive` that gives `first` once, then what the client sends next."""
    pending = [first]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _masked_body(body: bytes) -> bytes:
    try:
        sent: Any = json.loads(body)
    except ValueError:
        return body  # the server refuses it as it would have
    # One run's payload, or a list of them (runs.batch).
    runs = [
        {**run, **{k: redact_tree(run[k]) for k in _RUN_FIELDS if k in run}}
        if isinstance(run, dict)
        else run
        for run in (sent if isinstance(sent, list) else [sent])
    ]
    masked = runs if isinstance(sent, list) else runs[0]
    return body if masked == sent else json.dumps(masked).encode()


app = Starlette(middleware=[Middleware(MaskSecretsInRuns)])
