"""How the CLI words an error: one clear line (with what was saved and how to resume), or a
masked traceback with --debug.
"""

from __future__ import annotations

import sqlite3
import traceback
from pathlib import Path

import catalog
import graph.providers
import graph.runs
import graph.schemas
import localmodel.errors
import meaning
from catalog.exits import EXIT_BAD_INPUT, EXIT_BUG, exit_code_of
from catalog.paths import env, is_postgres_url, redact_url
from catalog.terminal import ERROR_DISPLAY_CHARS, clean_text, terminal_markup
from graph.context import SettingsError
from graph.errors import ShoppingError, file_problem
from graph.providers.secrets import redact_secrets
from graph.runs.checkpoint import (
    CHECKPOINT_URL_ENV,
    default_checkpoint_path,
    is_store_failure,
    postgres_failure,
    sqlite_error_hint,
)
from graph.runs.errors import RunFailed, RunInterrupted

# Errors with a message meant for the user, as each package names its own; anything else
# is a bug (a traceback). Each class says its exit code (catalog.exits).
USER_ERRORS = (
    *catalog.USER_ERRORS,
    *localmodel.errors.USER_ERRORS,
    *meaning.USER_ERRORS,
    *graph.schemas.USER_ERRORS,
    *graph.providers.USER_ERRORS,
    *graph.runs.USER_ERRORS,
    SettingsError,
)


def traceback_text(error: BaseException, *, full: bool) -> str:
    """The traceback of `error` (the last 4 frames unless `full`), with secrets masked and
    hidden characters shown, for --debug and for bugs."""
    frames = None if full else -4
    text = "".join(traceback.format_exception(error, limit=frames))
    return clean_text(redact_secrets(text), 200_000, keep_newlines=True) + "\n"


def interrupted_text(error: BaseException) -> str:
    """The line shown after Ctrl-C."""
    advice = resume_advice(error) or "finished steps are saved; see --list"
    return f"[yellow]interrupted.[/] {terminal_markup(advice, ERROR_DISPLAY_CHARS)}"


def exit_code(error: Exception) -> int:
    """The code an error ends the CLI with, by its type: bad input or a runtime failure as
    its class says, bad input for a path the system refused, a bug for anything else."""
    if file_problem(error) is not None:
        return EXIT_BAD_INPUT
    expected = isinstance(error, USER_ERRORS) or is_store_failure(error)
    return exit_code_of(error) if expected else EXIT_BUG


def resume_advice(error: BaseException) -> str:
    """What the shopper can do about a run an error stopped: --resume with the real thread
    id when something is saved, nothing to resume when nothing is, "" if not a run error."""
    if not isinstance(error, ShoppingError | RunInterrupted) or error.thread_id is None:
        return ""
    resume = f"--resume {error.thread_id}"
    if error.resumable is True:
        return f"finished steps are saved; continue with {resume}"
    if error.resumable is False:
        return "nothing of this run was saved; start it again"
    return f"if the run was saved (see --list), {resume} continues it"


def error_text(error: BaseException, db: str | None = None) -> str:
    """The one message shown for an expected error, with any API key masked, as markup."""
    return terminal_markup(error_message(error, db), ERROR_DISPLAY_CHARS, keep_newlines=True)


def error_message(error: BaseException, db: str | None = None) -> str:
    """The one message for an expected error, with any API key masked, as plain text (the
    --json document's error message; error_text shows it on a terminal)."""
    advice = resume_advice(error)
    # The checkpoint store failing: alone, or raised again as the run it stopped.
    store = error.__cause__ if isinstance(error, RunFailed) else error
    if isinstance(store, sqlite3.Error):
        path = Path(db).expanduser() if db else default_checkpoint_path()
        hint = sqlite_error_hint(store, path)
        notes = "; ".join(part for part in (hint, advice) if part)
        text = f"checkpoint database {path}: {store}" + (f" ({notes})" if notes else "")
    elif store is not None and is_store_failure(store):  # PostgreSQL's
        url = db if is_postgres_url(db) else env(CHECKPOINT_URL_ENV) or ""
        text = f"checkpoint database {redact_url(url)}: {postgres_failure(store, url)}"
        if advice:
            text += f" ({advice})"
    elif (problem := file_problem(error)) is not None:
        text = problem
    else:
        text = str(error)
        if advice and "--resume" not in text:
            text += f" ({advice})"
    # Shown as data (error_text): a model's output or a URL may hold "[...]" or escapes.
    return redact_secrets(text)


def bug_message(error: BaseException) -> str:
    """A bug's one line for the --json document (the traceback goes to stderr), masked."""
    return redact_secrets(" ".join(f"{type(error).__name__}: {error}".split()))[
        :ERROR_DISPLAY_CHARS
    ]


def run_of(error: BaseException) -> tuple[str | None, bool | None]:
    """The thread an error stopped and whether its finished steps are saved, as far as
    the error knows (None, None for an error outside any run)."""
    if isinstance(error, ShoppingError | RunInterrupted):
        return error.thread_id, error.resumable
    return None, None
