"""Serve the graph with the stock LangGraph API server on PostgreSQL + Redis: one replica.

Needs the `server` extra (`pip install -e '.[server]'`): the runtime `langgraph-runtime-pg`
(LANGGRAPH_RUNTIME_EDITION=pg) under `langgraph_api.cli.run_server`, the function behind
`langgraph dev`. Every replica started this way on the same database and Redis serves
the same threads, runs and assistants (docs/scaling.md). It reads:

- `DATABASE_URI`: `postgresql://...` (or `postgresql+asyncpg://...`), required;
- `REDIS_URI`: `redis://...` or `unix://...`, required;
- the graph from `langgraph.json`, and the assistant's own settings from the environment
  as `langgraph dev` would (SHOPPING_PROVIDER, OPENAI_BASE_URL, CATALOG_URL...).

Migrate the database once before starting replicas (`langgraph-runtime-pg-migrate upgrade`)
and start them with `LG_RUNTIME_PG_AUTO_MIGRATE=false`: the runtime's migration at
start-up takes no lock.

Usage: ``python scripts/serve_replica.py [--host 127.0.0.1] [--port 2024] [--jobs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def graphs(config: Path = REPO_ROOT / "langgraph.json") -> dict[str, str]:
    """The graphs of langgraph.json, their paths made absolute (the server may run
    anywhere)."""
    found: dict[str, str] = json.loads(config.read_text())["graphs"]
    return {name: str((config.parent / path).resolve()) for name, path in found.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2024)
    parser.add_argument("--jobs", type=int, default=10, help="runs at a time (default 10)")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    missing = [name for name in ("DATABASE_URI", "REDIS_URI") if not os.environ.get(name)]
    if missing:
        parser.error(f"set {' and '.join(missing)} (docs/scaling.md)")
    try:
        from langgraph_api.cli import run_server
    except ImportError as exc:
        parser.error(f"the API server is not installed ({exc}): pip install -e '.[server]'")
    run_server(
        args.host,
        args.port,
        False,
        graphs(),
        n_jobs_per_worker=args.jobs,
        open_browser=False,
        runtime_edition="pg",  # type: ignore[arg-type]  # an edition its Literal omits
        server_level=args.log_level,
        __database_uri__=os.environ["DATABASE_URI"],
        __redis_uri__=os.environ["REDIS_URI"],
        __migrations_path__=None,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
