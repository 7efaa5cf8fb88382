"""The exit codes every CLI of the project ends with (`python -m graph.run`, `python -m
graph.eval`, `python -m catalog`), documented in docs/scripting.md. They live in the plain
library because every CLI may import it (catalog imports nothing of graph).

An error meant for a person says which code it ends a CLI with by its class's `exit_code`
(click's exceptions do the same): the project's error bases set it, a subclass changes it
(`RunRefused(RunFailed)` is bad input, `CatalogUnavailable(CatalogError)` a failure).
"""

from __future__ import annotations

import signal

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


def exit_code_of(error: BaseException) -> int:
    """The code an error meant for a person ends a CLI with: its class's `exit_code`, or a
    runtime failure for one that names none (sqlite3.Error: the checkpoint store failed)."""
    code = getattr(error, "exit_code", EXIT_FAILED)
    return code if isinstance(code, int) else EXIT_FAILED
