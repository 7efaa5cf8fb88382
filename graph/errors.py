"""The base of the project's own errors, below every layer that raises one."""

from __future__ import annotations

from typing import Self

from catalog.exits import EXIT_FAILED


class ShoppingError(Exception):
    """An error meant for the shopper: its message says what to do. One that stopped a run
    names it (the session that ran it says so), so the message offers --resume only when
    that can work: `thread_id`, and `resumable`: True when finished steps are saved, False
    when nothing is, None when the store cannot tell."""

    thread_id: str | None = None
    resumable: bool | None = None
    # The code a CLI ends with (catalog.exits): a runtime failure unless a subclass says
    # the input was bad (EXIT_BAD_INPUT).
    exit_code: int = EXIT_FAILED

    def in_run(self, thread_id: str, resumable: bool | None) -> Self:
        self.thread_id, self.resumable = thread_id, resumable
        return self


# A path this long is shown by its ends: its middle tells nothing the length does not.
_SHOWN_PATH_CHARS = 120


def file_problem(error: BaseException) -> str | None:
    """The one line for an OSError naming a file the system refused (a name too long, a
    folder where a file should be, no permission): a problem with a path the user gave or
    configured, not a bug. None for any other error."""
    if not isinstance(error, OSError) or error.filename is None:
        return None
    path = str(error.filename)
    if len(path) > _SHOWN_PATH_CHARS:
        half = _SHOWN_PATH_CHARS // 2
        path = f"{path[:half]}…{path[-half:]} ({len(path):,} characters)"
    return f"cannot use {path}: {error.strerror or error}"
