"""The API server's log (`langgraph dev`, a replica): a run refused for bad input (an empty
request, a setting out of range) is one line there, not a traceback, as it is in the CLI.

langgraph_api's worker logs every error a run raises with its traceback. By the time a
stdlib filter sees the record, structlog has rendered that traceback into the record's
event dict ("exception") and named the error's class in its event text ("<class '...'>").
That shape is the server's, not a public API: it is read here only."""

from __future__ import annotations

import logging
import re
import sys

from catalog.exits import EXIT_BAD_INPUT

_ERROR_CLASS = re.compile(r"<class '([\w.]+)\.(\w+)'>")


def _is_refusal(event: object) -> bool:
    named = _ERROR_CLASS.search(str(event))
    # Only a class already loaded: reading the log imports nothing.
    error = getattr(sys.modules.get(named[1]), named[2], None) if named else None
    return getattr(error, "exit_code", None) == EXIT_BAD_INPUT


class _RefusalsInOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, dict) and _is_refusal(record.msg.get("event")):
            record.msg.pop("exception", None)
        return True


def log_refusals_in_one_line() -> None:
    logging.getLogger("langgraph_api.worker").addFilter(_REFUSALS_IN_ONE_LINE)


_REFUSALS_IN_ONE_LINE = _RefusalsInOneLine()
