"""What a run stops with, naming the run: RunFailed, Ctrl-C, and the project's own errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from catalog.exits import EXIT_BAD_INPUT
from graph.errors import ShoppingError
from graph.runs.checkpoint import is_store_failure


class RunFailed(ShoppingError, RuntimeError):
    """A run cannot start or stopped on an error; its checkpoint is intact. Raised from the
    checkpoint store's own error (SQLite's or PostgreSQL's) when that stopped the run."""


class RunRefused(RunFailed):
    """A run cannot start or resume as asked (no such thread, a finished one, a thread id
    that cannot be typed back, a setting out of range, a catalog other than the run's):
    what was given must change, so it is bad input, not a failure."""

    exit_code = EXIT_BAD_INPUT


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C, naming the run it stopped as a ShoppingError does."""

    def __init__(self, thread_id: str, resumable: bool | None) -> None:
        super().__init__()
        self.thread_id, self.resumable = thread_id, resumable


@contextmanager
def naming_run(thread_id: str, resumable: Callable[[], bool | None]) -> Iterator[None]:
    """An error escaping the block names the run it stopped: the project's own carry it,
    Ctrl-C and the checkpoint store's errors are raised again in errors that do (from
    them), and a bug goes on as it is."""
    try:
        yield
    except ShoppingError as error:
        error.in_run(thread_id, resumable())
        raise
    except KeyboardInterrupt as error:
        raise RunInterrupted(thread_id, resumable()) from error
    except Exception as error:
        if not is_store_failure(error):
            raise
        raise RunFailed(" ".join(str(error).split())).in_run(thread_id, resumable()) from error
