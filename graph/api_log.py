"""The API server's log: a run refused for bad input (an empty request, a setting out of
range) is one line there, as in the CLI, not a traceback. langgraph_api's worker logs a
run's error with its traceback, which structlog has rendered into the record's event dict
("exception") when a stdlib filter sees it, the event naming the error's class ("<class
'...'>"): the server's shape, not a public API, read only here."""

from __future__ import annotations

import logging
import re
import sys

from catalog.exits import EXIT_BAD_INPUT

_ERROR_CLASS = re.compile(r"<class '([\w.]+)\.(\w+)'>")


def _without_a_refusals_traceback(record: logging.LogRecord) -> bool:
    event = record.msg
    if isinstance(event, dict) and (named := _ERROR_CLASS.search(str(event.get("event")))):
        # Only a class already loaded: reading the log imports nothing.
        error = getattr(sys.modules.get(named[1]), named[2], None)
        if getattr(error, "exit_code", None) == EXIT_BAD_INPUT:
            event.pop("exception", None)
    return True


def log_refusals_in_one_line() -> None:
    logging.getLogger("langgraph_api.worker").addFilter(_without_a_refusals_traceback)
