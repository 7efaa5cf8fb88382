"""Which provider faults are retried and how long to wait, and the one line that words a
provider failure for the CLI.
"""

from __future__ import annotations

import functools
import json
import math
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
import openai
from langgraph.types import RetryPolicy

from graph.providers.deadline import LLMDeadlineExceeded, stopping_error
from graph.providers.local import lost_local_server

# Every LLM node retries provider faults this many times in all, with backoff; the
# clients' own retries are off, so retries never stack.
LLM_MAX_ATTEMPTS = 3
# A server's Retry-After is honoured up to this many seconds; asked for longer, the run
# gives up at once and says how long the server asked for.
RETRY_AFTER_CAP_S = 20.0


@functools.cache
def llm_retry_policy() -> RetryPolicy:
    """The retry policy every LLM node runs under."""
    return RetryPolicy(
        max_attempts=LLM_MAX_ATTEMPTS,
        initial_interval=1.0,
        backoff_factor=2.0,
        retry_on=retry_provider_error,
    )


def retry_after_s(error: BaseException) -> float | None:
    """Seconds the server asked to wait before a retry (Retry-After as seconds or as an
    HTTP date, or OpenAI's retry-after-ms), or None if it did not ask."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if milliseconds is not None:
            seconds = float(milliseconds) / 1000
        elif value is None:
            return None
        else:
            try:
                seconds = float(value)
            except ValueError:
                seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
    except (TypeError, ValueError, OverflowError):
        return None  # unreadable: the usual backoff applies
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_provider_error(error: BaseException) -> bool:
    """The LLM nodes' retry predicate: retry transient faults, first waiting what the
    server asked for in Retry-After (the policy's own backoff follows). A wait longer
    than RETRY_AFTER_CAP_S is not retried: the run gives up at once."""
    if not is_transient_provider_error(error):
        return False
    wait = retry_after_s(error)
    if wait is None:
        return True
    if wait > RETRY_AFTER_CAP_S:
        return False
    time.sleep(wait)
    return True


def is_transient_provider_error(error: BaseException) -> bool:
    """Faults worth retrying: timeouts, refused connections, 429 and 5xx, and a body
    that was cut off or is not JSON. Bad requests and auth errors are not retried."""
    if lost_local_server(error):
        return False  # the process is gone: a retry would only be refused again
    if stopping_error(error) is not None:
        return False  # past its whole-call deadline, or stopped by Ctrl-C
    if isinstance(
        error,
        openai.APITimeoutError
        | openai.APIConnectionError
        | openai.RateLimitError
        | openai.InternalServerError
        | openai.APIResponseValidationError
        | httpx.TransportError,
    ):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code >= 500
    # A truncated or non-JSON body surfaces as a decode error from the SDK, and a streamed
    # answer with no event in it (a proxy's HTML page, say) as LangChain's empty stream.
    return isinstance(error, json.JSONDecodeError) or _is_empty_stream(error)


def is_streaming_refused(error: BaseException) -> bool:
    """A server that cannot stream: it refused a streamed call (a 4xx naming "stream"), or
    answered one with a plain body that holds no stream event."""
    if isinstance(error, openai.APIStatusError) and 400 <= error.status_code < 500:
        return "stream" in str(error).lower()
    return _is_empty_stream(error)


def _is_empty_stream(error: BaseException) -> bool:
    # langchain-core raises a bare ValueError for it; its wording is the only mark.
    return isinstance(error, ValueError) and str(error).startswith("No generations found in stream")


def describe_provider_error(error: BaseException) -> str | None:
    """One line naming a provider failure (what failed, where, after how many attempts),
    or None if `error` is not a provider error."""
    stopped = lost_local_server(error)
    if stopped:
        return " ".join(stopped.split())
    stopping = stopping_error(error)
    if isinstance(stopping, LLMDeadlineExceeded):
        return f"{stopping}; not retried"
    if stopping is not None:
        return str(stopping)
    transient = is_transient_provider_error(error)
    if not isinstance(error, openai.APIError) and not transient:
        return None
    if isinstance(error, openai.APITimeoutError):
        what = "the LLM server did not answer in time (SHOPPING_LLM_TIMEOUT)"
    elif isinstance(error, openai.APIConnectionError):
        # The root cause (refused, reset, body cut off) is at the end of the chain.
        cause: BaseException | None = error
        detail = ""
        while cause is not None:
            if str(cause) and not isinstance(cause, openai.APIError):
                detail = f": {type(cause).__name__}: {cause}"
            cause = cause.__cause__ or cause.__context__
        what = f"cannot reach the LLM server (connection failed{detail})"
    elif isinstance(error, openai.APIStatusError):
        what = f"the LLM server answered HTTP {error.status_code}: {error.message}"
    elif isinstance(error, json.JSONDecodeError | openai.APIResponseValidationError):
        what = f"the LLM server sent a response that is not valid JSON ({error})"
    elif _is_empty_stream(error):
        what = "the LLM server sent a streamed response that is not valid JSON events"
    else:
        what = f"LLM provider error: {error}"
    request = getattr(error, "request", None)
    if request is not None:
        what += f" [{request.method} {request.url}]"
    wait = retry_after_s(error)
    if transient and wait is not None and wait > RETRY_AFTER_CAP_S:
        what += (
            f"; the server asked to wait {wait:,.0f} s before retrying, more than the "
            f"{RETRY_AFTER_CAP_S:.0f} s this client waits, so it gave up at once"
        )
    elif transient:
        # What was saved, and the --resume command, is added by the caller, which
        # knows the thread (graph.cli.render.error_text).
        what += f"; gave up after {llm_retry_policy().max_attempts} attempts"
    return " ".join(what.split())
