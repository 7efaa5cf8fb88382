"""Which provider faults are retried and how long to wait, and the one line that words a
provider failure for the CLI. What a fault is, each provider family says (its `fault`
reader in the registry); this module knows only the retry policy.
"""

from __future__ import annotations

import functools
import math
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from langgraph.types import RetryPolicy

from graph.providers.registry import provider_fault

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
    """A fault worth retrying, as its provider family reads it."""
    fault = provider_fault(error)
    return fault is not None and fault.transient


def is_streaming_refused(error: BaseException) -> bool:
    """A server that cannot stream, as its provider family reads the error."""
    fault = provider_fault(error)
    return fault is not None and fault.streaming_refused


def describe_provider_error(error: BaseException) -> str | None:
    """One line naming a provider failure (what failed, where, after how many attempts),
    or None if `error` is not a provider error."""
    fault = provider_fault(error)
    if fault is None:
        return None
    what = fault.what
    wait = retry_after_s(error)
    if fault.transient and wait is not None and wait > RETRY_AFTER_CAP_S:
        what += (
            f"; the server asked to wait {wait:,.0f} s before retrying, more than the "
            f"{RETRY_AFTER_CAP_S:.0f} s this client waits, so it gave up at once"
        )
    elif fault.transient:
        # What was saved, and the --resume command, is added by the caller, which
        # knows the thread (graph.cli.errors.error_text).
        what += f"; gave up after {llm_retry_policy().max_attempts} attempts"
    return " ".join(what.split())
