"""Serve the graph with the stock LangGraph API server on PostgreSQL + Redis: one replica.

Needs the `server` extra (`pip install -e '.[server]'`): the runtime `langgraph-runtime-pg`
(LANGGRAPH_RUNTIME_EDITION=pg) under `langgraph_api.cli.run_server`, the function behind
`langgraph dev`. Every replica started this way on the same database and Redis serves
the same threads, runs and assistants (docs/scaling.md). It reads:

- `DATABASE_URI`: `postgresql://...` (or `postgresql+asyncpg://...`), required;
- `REDIS_URI`: `redis://...` or `unix://...`, required;
- the graph from `langgraph.json`, and the assistant's own settings from the environment
  as `langgraph dev` would (SHOPPING_PROVIDER, OPENAI_BASE_URL, CATALOG_URL...).

Replicas may start together, on an empty database too. The runtime migrates its schema
and sets up the checkpointer's and the store's tables at start-up without a lock, so two
replicas starting at once collide (docs/scaling.md); this script does that set-up first,
under the same PostgreSQL advisory lock as the CLI's checkpointer, and then starts the
server with `LG_RUNTIME_PG_AUTO_MIGRATE=false`, which finds everything in place. Set
`LG_RUNTIME_PG_AUTO_MIGRATE=false` yourself to leave the runtime's schema to a job of
your own (`langgraph-runtime-pg-migrate upgrade`); the tables are still set up here.

Usage: ``python scripts/serve_replica.py [--host 127.0.0.1] [--port 2024] [--jobs N]
[--config langgraph.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
AUTO_MIGRATE = "LG_RUNTIME_PG_AUTO_MIGRATE"


def graphs(config: Path = REPO_ROOT / "langgraph.json") -> dict[str, str]:
    """The graphs of langgraph.json, their paths made absolute (the server may run
    anywhere)."""
    found: dict[str, str] = json.loads(config.read_text())["graphs"]
    return {name: str((config.parent / path).resolve()) for name, path in found.items()}


def runtime_migrates() -> bool:
    """LG_RUNTIME_PG_AUTO_MIGRATE as the runtime reads it (its own reader is private)."""
    value = os.environ.get(AUTO_MIGRATE, "true").strip().lower()
    return value not in ("0", "false", "no", "off")


def prepare_database(database_uri: str) -> None:
    """What the runtime sets up at start-up, done here one replica at a time: its Alembic
    schema (unless LG_RUNTIME_PG_AUTO_MIGRATE is off), the checkpointer's tables and the
    store's. Each step finds what an earlier replica did and does nothing."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore
    from langgraph_runtime_pg.database import to_psycopg_uri
    from langgraph_runtime_pg.migrate import upgrade_head
    from psycopg.rows import dict_row

    from graph.runs.checkpoint import postgres_setup_lock

    url = to_psycopg_uri(database_uri)
    # Autocommit: the checkpointer's setup runs CREATE INDEX CONCURRENTLY.
    with (
        psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn,
        postgres_setup_lock(conn),
    ):
        if runtime_migrates():
            upgrade_head(database_uri)
        PostgresSaver(conn).setup()
        PostgresStore(conn).setup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2024)
    parser.add_argument("--jobs", type=int, default=10, help="runs at a time (default 10)")
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--config",
        type=Path,
        default=REPO_ROOT / "langgraph.json",
        help="the langgraph.json whose graphs to serve (default: this repository's)",
    )
    args = parser.parse_args(argv)
    missing = [name for name in ("DATABASE_URI", "REDIS_URI") if not os.environ.get(name)]
    if missing:
        parser.error(f"set {' and '.join(missing)} (docs/scaling.md)")
    try:
        import langgraph_runtime_pg  # noqa: F401  # the pg edition run_server selects
        from langgraph_api.cli import run_server
    except ImportError as exc:
        parser.error(f"the API server is not installed ({exc}): pip install -e '.[server]'")
    prepare_database(os.environ["DATABASE_URI"])
    os.environ[AUTO_MIGRATE] = "false"  # done above, under the lock
    run_server(
        args.host,
        args.port,
        False,
        graphs(args.config),
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
