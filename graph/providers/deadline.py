"""A whole-call deadline for every LLM request, and a way to stop calls in flight (Ctrl-C).

The HTTP client's timeout bounds each wait between bytes, so a server that trickles its
body, or streams without end, could hold a call forever. `DeadlineTransport` runs each
request in a daemon thread and hands its bytes over through a queue; the calling thread
waits at most until the call's deadline, and gives up at once when `stop_calls()` was
called. The caller gets a clear error either way; the abandoned request ends on its own
(its reader stops at the next chunk, or at the per-read timeout).

Waiting in the calling thread, not the main one, matters: LangChain runs a structured
call's branches in worker threads, and the main thread's KeyboardInterrupt first waits
for those workers, so a call that ignored Ctrl-C held the whole process.
"""

from __future__ import annotations

import importlib
import queue
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import openai


def _sdk_http_module() -> ModuleType:
    """The HTTP library the OpenAI SDK is built on (httpx, or httpx2 from openai 3), so
    the transport and its errors are the types the SDK expects and maps."""
    client = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(client.__module__.split(".")[0])


httpx: Any = _sdk_http_module()

# Set by stop_calls() (the CLI's Ctrl-C handler); cleared when a new session starts.
_stopped = threading.Event()
# How often a waiting caller looks at the stop flag, in seconds.
_POLL_S = 0.05


class LLMDeadlineExceeded(httpx.TimeoutException):
    """An LLM call took longer than its whole-call deadline (not retried)."""

    def __init__(self, deadline_s: float, request: httpx.Request) -> None:
        super().__init__(
            f"the LLM call took longer than its whole-call deadline of {deadline_s:g} s "
            "(SHOPPING_LLM_DEADLINE)",
            request=request,
        )
        self.deadline_s = deadline_s


class LLMCallStopped(httpx.TransportError):
    """An LLM call was stopped before it finished (Ctrl-C)."""


def stop_calls() -> None:
    """Make every LLM call in flight, and every new one, fail at once."""
    _stopped.set()


def allow_calls() -> None:
    _stopped.clear()


def stopping_error(error: BaseException | None) -> LLMDeadlineExceeded | LLMCallStopped | None:
    """The deadline or stop error behind `error` (the SDK wraps it), if any."""
    for _ in range(20):
        if error is None or isinstance(error, LLMDeadlineExceeded | LLMCallStopped):
            return error
        error = error.__cause__ or error.__context__
    return None


class _Call(httpx.SyncByteStream):
    """One request running in a daemon thread; its response and chunks come through a
    queue that the caller reads with the deadline and the stop flag in mind. Iterated,
    it is the response's body; closed, the thread stops passing chunks on."""

    def __init__(self, inner: httpx.BaseTransport, request: httpx.Request, deadline_s: float):
        self.request = request
        self.deadline_s = deadline_s
        self.deadline = time.monotonic() + deadline_s
        self.items: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.abandoned = threading.Event()
        threading.Thread(target=self._run, args=(inner,), name="llm-call", daemon=True).start()

    def _run(self, inner: httpx.BaseTransport) -> None:
        response: httpx.Response | None = None
        try:
            response = inner.handle_request(self.request)
            self.items.put(("response", response))
            for chunk in response.stream:
                if self.abandoned.is_set():
                    return
                self.items.put(("chunk", chunk))
            self.items.put(("end", None))
        except BaseException as error:
            self.items.put(("error", error))
        finally:
            if response is not None:
                response.close()

    def next_item(self) -> tuple[str, Any]:
        while True:
            if _stopped.is_set():
                self.abandoned.set()
                raise LLMCallStopped("the LLM call was stopped (Ctrl-C)", request=self.request)
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.abandoned.set()
                raise LLMDeadlineExceeded(self.deadline_s, self.request)
            try:
                kind, value = self.items.get(timeout=min(remaining, _POLL_S))
            except queue.Empty:
                continue
            if kind == "error":
                raise value
            return kind, value

    def __iter__(self) -> Iterator[bytes]:
        while True:
            kind, value = self.next_item()
            if kind == "end":
                return
            yield value

    def close(self) -> None:
        self.abandoned.set()


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport that gives every request at most `deadline_s` seconds from
    sending to the last byte of the body, and stops at once on `stop_calls()`."""

    def __init__(self, deadline_s: float, inner: httpx.BaseTransport | None = None) -> None:
        self.deadline_s = deadline_s
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        call = _Call(self.inner, request, self.deadline_s)
        _, response = call.next_item()
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=call,
            extensions=response.extensions,
        )

    def close(self) -> None:
        self.inner.close()


def deadline_http_client(deadline_s: float, proxy: str | None = None) -> Any:
    """The OpenAI SDK's default client, with every request under the whole-call deadline,
    through `proxy` if given."""
    inner = httpx.HTTPTransport(proxy=proxy) if proxy else None
    return openai.DefaultHttpxClient(transport=DeadlineTransport(deadline_s, inner))
