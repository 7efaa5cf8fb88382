"""The one error type of the local-model runtime, in USER_ERRORS as every package names its own."""

from __future__ import annotations


class LocalModelError(RuntimeError):
    """The local model cannot be assembled or served; the message says what to do."""


USER_ERRORS = (LocalModelError,)
