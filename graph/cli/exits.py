"""How the CLI ends: its exit codes, and how `--json` prints its one document on stdout
(the documents' shapes: graph/cli/documents.py, docs/scripting.md). JSON_SCHEMA_VERSION
changes when a field changes meaning or goes away (a new field does not change it).

Kept free of heavy imports: the argument checks use it before LangGraph is loaded.
"""

from __future__ import annotations

import json
from typing import Any

# The codes every CLI of the project shares are catalog.exits' (docs/scripting.md); this one
# only runs have.
EXIT_AWAITING_APPROVAL = 3  # the plan waits for approval: no terminal to ask, no --yes

EXIT_CODES_HELP = """exit codes:
  0    done (or rejected); a listing or a history shown
  1    a runtime failure: the model server, a provider or a database failed or could
       not be reached, or a run failed (the message says whether --resume continues it)
  2    bad arguments or input: a request, thread id, setting or path that cannot be used
  3    the plan awaits approval: --resume THREAD --yes runs it
  70   a bug (a traceback is printed)
  130  interrupted (Ctrl-C); finished steps are saved

With --json, stdout holds one JSON object for a run however it ends (see its "status"
and "exit_code")."""

# The version of the --json run document's shape (its "schema_version").
JSON_SCHEMA_VERSION = 1


def print_json(document: Any) -> None:
    """`document` on stdout as strict JSON (plain print: rich would wrap long lines; a
    figure that is inf or NaN is a bug to stop on, never `Infinity`)."""
    from catalog.terminal import STDOUT  # a full device: StdoutUnwritable, one line

    print(json.dumps(document, indent=2, allow_nan=False), file=STDOUT, flush=True)
