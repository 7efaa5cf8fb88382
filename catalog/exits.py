"""The exit codes every CLI of the project ends with (`python -m graph.run`, `python -m
graph.eval`, `python -m catalog`), documented in docs/scripting.md. They live in the plain
library because every CLI may import it (catalog imports nothing of graph).

An error meant for a person says which code it ends a CLI with by its class's `exit_code`
(click's exceptions do the same): the project's error bases set it, a subclass changes it
(`RunRefused(RunFailed)` is bad input, `CatalogUnavailable(CatalogError)` a failure).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

EXIT_OK = 0  # done (a run finished or was rejected, a listing or a search shown)
# A runtime failure: a model server, provider or database failed or could not be reached,
# a run failed, a store could not be read. The same command may work later. 1, as a
# Python program that fails exits.
EXIT_FAILED = 1
# Bad arguments or input (argparse's own code): a request, a thread id, a setting, a file
# or path given that cannot be used. The command must change before it can work.
EXIT_BAD_INPUT = 2
EXIT_BUG = 70  # a bug: a traceback is printed (sysexits' EX_SOFTWARE)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)
# The exit status of a process that SIGPIPE ended (128 + 13), as `yes | head -1` gives.
EXIT_STDOUT_CLOSED = 128 + getattr(signal, "SIGPIPE", 13)


class StdoutUnwritable(OSError):
    """stdout refused a write (a full device, an I/O error), not as a closed pipe does: a
    fault of the environment, one line on stderr and EXIT_FAILED, never a second try."""


def stdout_refusals_in_one_line(main: Callable[P, int]) -> Callable[P, int]:
    """A CLI's `main`, ending as every CLI of the project does when stdout refuses what it
    prints (through catalog.terminal's STDOUT or consoles): a reader that went away (`...
    | head -1`) quietly, with the status SIGPIPE gives; any other refusal (a full device)
    with one line on stderr and EXIT_FAILED, a fault of the environment, not a bug."""

    @functools.wraps(main)
    def ended(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except BrokenPipeError:
            return stdout_closed()
        except StdoutUnwritable as error:
            stdout_closed()  # what is left unwritten is dropped
            sys.stderr.write(f"error: {error}\n")
            return EXIT_FAILED

    return ended


def stdout_closed() -> int:
    """What a CLI does when the reader of its stdout went away (`... | head -1`), after
    Python's recipe for SIGPIPE (docs: signal, "Note on SIGPIPE"): point stdout at devnull,
    so the flush at exit cannot fail again and print a traceback; returns the exit status."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_STDOUT_CLOSED


def exit_code_of(error: BaseException) -> int:
    """The code an error meant for a person ends a CLI with: its class's `exit_code`, or a
    runtime failure for one that names none (sqlite3.Error: the checkpoint store failed)."""
    code = getattr(error, "exit_code", EXIT_FAILED)
    return code if isinstance(code, int) else EXIT_FAILED
