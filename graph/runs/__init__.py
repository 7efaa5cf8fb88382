"""Runs as sessions: start, resume and approve a run; its plan draft, its checkpoints and
its threads.
"""

import sqlite3

from graph.runs.checkpoint import CheckpointStoreError
from graph.runs.errors import RunFailed
from graph.runs.threads import UnreadableThread

# The checkpoint store failing (disk full, locked) is a sqlite3.Error: saved steps are intact.
USER_ERRORS = (CheckpointStoreError, RunFailed, UnreadableThread, sqlite3.Error)
