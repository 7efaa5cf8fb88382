"""`python -m graph.eval`: the evaluation harness lives in graph.evals (main: its CLI)."""

from __future__ import annotations

import sys

from graph.evals.main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
