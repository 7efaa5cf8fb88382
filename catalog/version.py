"""This project's version, read from its package metadata in one place: every CLI's
``--version`` and the version stamped on each checkpoint (graph/runs/threads.py).

It lives in the catalog, the one package every front end may import (the graph imports the
catalog, never the reverse). The version itself is written once, in pyproject.toml.
"""

from __future__ import annotations

import argparse
from functools import cache
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "shopping-planner"
# What a checkout that was never installed reports: below every release, so a checkpoint
# any release wrote reads as newer than it (and is checked before it is resumed).
UNKNOWN_VERSION = "0+unknown"


@cache
def package_version() -> str:
    """shopping-planner's version, as its installed package metadata states it."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return UNKNOWN_VERSION


def add_version_option(parser: argparse.ArgumentParser) -> None:
    """`--version`: print "shopping-planner X.Y.Z" and exit 0, as every CLI here does."""
    parser.add_argument(
        "--version",
        action="version",
        version=f"{DISTRIBUTION} {package_version()}",
        help="print the version of shopping-planner and exit",
    )
