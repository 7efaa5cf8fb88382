"""A fake OpenAI-compatible chat server on loopback, for tests of the real HTTP path.

It is not a model: it answers each forced tool call with the next scripted arguments for
that tool name, and can inject faults (timeouts, 429, 500, cut-off or non-JSON bodies,
dropped connections) before answering. Tests use it to drive the CLI in a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from graph.prompts import NAMES_A_PRODUCT, follow_up_kind_messages

# "ok" is a no-fault slot, so a fault can be aimed at the Nth request; "401" answers
# like a leaky proxy that echoes the bearer key back in its error body; "text" answers
# in prose, without the tool call the request forces. "429:<value>" is a 429 whose
# Retry-After header holds <value> (seconds or an HTTP date). "trickle" sends the answer
# one byte per `trickle_interval` (each read arrives well within any read timeout);
# "endless" streams whitespace chunks without end. Both stop when the client hangs up.
# "choices_null" answers `choices: null`, and "double_encoded" sends the tool call's
# arguments JSON-encoded twice (a JSON string inside the JSON), as odd servers do.
FAULTS = (
    "timeout",
    "429",
    "500",
    "truncated",
    "non_json",
    "drop",
    "401",
    "text",
    "trickle",
    "endless",
    "choices_null",
    "double_encoded",
    "ok",
)


@dataclass
class FakeScript:
    replies: dict[str, list[dict[str, Any]]]
    delays: dict[str, float] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)  # consumed one per request, in order
    timeout_sleep: float = 5.0
    trickle_interval: float = 0.2
    # Prompt text -> seconds: a request whose messages contain the text is held that long
    # before its answer (deterministic, unlike changing `delays` while a run is going).
    holds: dict[str, float] = field(default_factory=dict)
    # Computes a tool's arguments from (tool name, request body), for answers that must
    # follow the request (several clients at once); None falls back to `replies`.
    reply_for: Callable[[str, dict[str, Any]], dict[str, Any] | None] | None = None
    # Tool name -> N: requests forcing that tool are held until N of them have arrived
    # (or `gather_timeout` passes), so N clients are provably mid-run at the same time.
    gather: dict[str, int] = field(default_factory=dict)
    gather_timeout: float = 30.0
    # The `usage` block of each answer in turn, sent as given (a server's floats, strings
    # or negative counts); when none are left, counts from the prompt's length.
    usage_blocks: list[Any] = field(default_factory=list)
    # A server that cannot stream: "400" refuses a streamed request with HTTP 400, "plain"
    # answers it with the plain JSON body, as some proxies do; None streams as asked.
    refuse_streaming: str | None = None
    # The answer to the question asked before a first plan (prompts.NAMES_A_PRODUCT):
    # "yes" keeps a request named. Those questions are kept apart (`questions`), and no
    # fault or reply of the script is spent on them: those aim at the calls they name.
    # The question of a follow-up's kind likewise: "" is no kind (the planner's stands).
    names_a_product: str = "yes"
    follow_up_kind: str = ""
    questions: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() per request
    in_flight: int = 0  # requests being answered now
    max_in_flight: int = 0  # the most ever answered at once
    lock: threading.Lock = field(default_factory=threading.Lock)
    gathered: threading.Condition = field(default_factory=threading.Condition)
    gather_counts: dict[str, int] = field(default_factory=dict)

    def calls_for(self, tool: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if _forced_tool(r) == tool]


def _forced_tool(body: dict[str, Any]) -> str:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return choice.get("function", {}).get("name", "")
    tools = body.get("tools") or []
    return tools[0]["function"]["name"] if tools else "text"


# The questions asked before planning, by their system prompt, and the script's field
# that answers each.
_QUESTIONS = {
    NAMES_A_PRODUCT: "names_a_product",
    str(follow_up_kind_messages("", "")[0].content): "follow_up_kind",
}


def _question(body: dict[str, Any]) -> str | None:
    messages = body.get("messages") or [{}]
    return _QUESTIONS.get(str(messages[0].get("content")))


def _completion(tool: str, arguments: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{tool}",
                            "type": "function",
                            "function": {"name": tool, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
            }
        ],
        "usage": {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": 25,
            "total_tokens": prompt_chars // 4 + 25,
        },
    }


def _stream_events(completion: dict[str, Any], pieces: int = 100) -> list[dict[str, Any]]:
    """The completion as OpenAI streams it: a role delta, the tool call's arguments (or the
    text) in about `pieces` deltas of at least 12 characters, the finish, the usage chunk.
    (A model sends a token per delta; a scripted megabyte reply would take the client
    minutes to merge delta by delta, which the whole-call deadline bounds, not this fake.)"""
    message = completion["choices"][0]["message"]
    text_or_arguments = message.get("content") or ""
    if message.get("tool_calls"):
        text_or_arguments = message["tool_calls"][0]["function"]["arguments"]
    piece = max(12, len(text_or_arguments) // pieces + 1)
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def delta(value: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": value, "finish_reason": finish}]}

    events = [delta({"role": "assistant", "content": None})]
    if not message.get("tool_calls"):  # a prose answer
        text = message.get("content") or ""
        events += [delta({"content": text[i : i + piece]}) for i in range(0, len(text), piece)]
        events.append(delta({}, finish=completion["choices"][0]["finish_reason"]))
        return [*events, {**base, "choices": [], "usage": completion["usage"]}]
    call = message["tool_calls"][0]
    arguments = call["function"]["arguments"]
    for start in range(0, len(arguments), piece):
        function: dict[str, Any] = {"arguments": arguments[start : start + piece]}
        first = {"id": call["id"], "type": "function"} if start == 0 else {}
        if start == 0:
            function["name"] = call["function"]["name"]
        events.append(delta({"tool_calls": [{"index": 0, **first, "function": function}]}))
    events.append(delta({}, finish="tool_calls"))
    events.append({**base, "choices": [], "usage": completion["usage"]})
    return events


SSE = {"Content-Type": "text/event-stream"}


def _sse_body(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, as OpenAI streams a completion (stream: true)."""
    lines = [*(json.dumps(event) for event in events), "[DONE]"]
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def _handler(script: FakeScript) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(
            self,
            status: int,
            payload: bytes,
            length: int | None = None,
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            headers = {"Content-Type": "application/json", **(headers or {})}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(length if length is not None else len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def do_GET(self) -> None:
            self._send(200, json.dumps({"data": [{"id": "fake"}]}).encode())

        def do_POST(self) -> None:
            with script.lock:
                script.in_flight += 1
                script.max_in_flight = max(script.max_in_flight, script.in_flight)
            try:
                self._post()
            except (BrokenPipeError, ConnectionResetError):
                # The client went away mid-reply (a test may kill or fail it on purpose);
                # a real server shrugs that off, and a traceback here would leak into the
                # output a test inspects.
                pass
            finally:
                with script.lock:
                    script.in_flight -= 1

        def _gather(self, tool: str) -> None:
            wanted = script.gather.get(tool)
            if not wanted:
                return
            with script.gathered:
                script.gather_counts[tool] = script.gather_counts.get(tool, 0) + 1
                script.gathered.notify_all()
                script.gathered.wait_for(
                    lambda: script.gather_counts[tool] >= wanted, timeout=script.gather_timeout
                )

        def _post(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if question := _question(body):
                with script.lock:
                    script.questions.append(body)
                completion = _completion("text", {}, body)
                message = completion["choices"][0]["message"]
                message["content"], message["tool_calls"] = getattr(script, question), None
                completion["choices"][0]["finish_reason"] = "stop"
                self._send(200, json.dumps(completion).encode())
                return
            with script.lock:
                script.requests.append(body)
                script.arrivals.append(time.monotonic())
                fault = script.faults.pop(0) if script.faults else None
            self._gather(_forced_tool(body))
            if body.get("stream") and script.refuse_streaming == "400":
                error = {"error": {"message": "streaming is not supported", "type": "invalid"}}
                self._send(400, json.dumps(error).encode())
                return
            if fault == "timeout":
                time.sleep(script.timeout_sleep)
                return
            if fault == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if fault == "401":
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                error = {"error": {"message": f"Incorrect API key provided: {key}"}}
                self._send(401, json.dumps(error).encode())
                return
            if fault and fault.startswith("429:"):
                error = {"error": {"message": "slow down", "type": "rate_limit"}}
                retry_after = {"Retry-After": fault.removeprefix("429:")}
                self._send(429, json.dumps(error).encode(), headers=retry_after)
                return
            if fault in ("429", "500"):
                error = {"error": {"message": f"injected {fault}", "type": "fault"}}
                self._send(int(fault), json.dumps(error).encode())
                return
            if fault == "text":
                completion = _completion("text", {}, body)
                message = completion["choices"][0]["message"]
                message["content"], message["tool_calls"] = "I would pick the strap.", None
                completion["choices"][0]["finish_reason"] = "stop"
                if body.get("stream"):
                    self._send(200, _sse_body(_stream_events(completion)), headers=SSE)
                    return
                self._send(200, json.dumps(completion).encode())
                return
            if fault == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.close_connection = True
                with contextlib.suppress(OSError):  # the client hung up: done
                    while True:
                        self.wfile.write(b"1\r\n \r\n")
                        self.wfile.flush()
                        time.sleep(script.trickle_interval)
                return
            if fault == "non_json":
                self._send(200, b"<html>gateway error</html>")
                return
            tool = _forced_tool(body)
            arguments = script.reply_for(tool, body) if script.reply_for else None
            if arguments is None:
                with script.lock:
                    queue = script.replies.get(tool) or []
                    # A cut-off answer never arrived, so its reply stays for the next attempt.
                    arguments = (
                        (queue[0] if fault == "truncated" else queue.pop(0)) if queue else None
                    )
            if arguments is None:
                self._send(400, json.dumps({"error": {"message": f"no reply for {tool}"}}).encode())
                return
            time.sleep(script.delays.get(tool, 0.0))
            prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
            for text, seconds in list(script.holds.items()):
                if text in prompt:
                    time.sleep(seconds)
            completion = _completion(tool, arguments, body)
            if fault == "double_encoded":
                function = completion["choices"][0]["message"]["tool_calls"][0]["function"]
                function["arguments"] = json.dumps(function["arguments"])
            with script.lock:
                if script.usage_blocks:
                    completion["usage"] = script.usage_blocks.pop(0)
            # A streamed answer is the same completion as events; the faults apply alike.
            streamed = bool(body.get("stream")) and script.refuse_streaming != "plain"
            events = _stream_events(completion) if streamed else [completion]
            if fault == "choices_null":
                events = [{**event, "choices": None} for event in events]
            payload = _sse_body(events) if streamed else json.dumps(events[0]).encode()
            kind = SSE if streamed else {"Content-Type": "application/json"}
            if fault == "trickle":
                self.send_response(200)
                self.send_header("Content-Type", kind["Content-Type"])
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.close_connection = True
                with contextlib.suppress(OSError):  # the client hung up: done
                    for byte in payload:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(script.trickle_interval)
                return
            if fault == "truncated":
                # Promise the full length, send half, then hang up.
                self._send(200, payload[: len(payload) // 2], length=len(payload), headers=kind)
                self.close_connection = True
                return
            self._send(200, payload, headers=kind)

    return Handler


@contextmanager
def fake_openai_server(script: FakeScript, port: int = 0) -> Iterator[str]:
    """Serve the script on 127.0.0.1 (`port`, default a free one); yields the base URL
    ending in /v1."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
