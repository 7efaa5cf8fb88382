"""`python -m graph.run` and the `shopping-planner` script: the CLI lives in graph.cli.main."""

from __future__ import annotations

import sys

from graph.cli.main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
