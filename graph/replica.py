"""`shopping-planner-replica` (`python -m graph.replica`): one replica of the stock LangGraph
API server on PostgreSQL + Redis, serving this package's graph (docs/scaling.md).

Needs the `server` extra: the runtime `langgraph-runtime-pg` under `langgraph_api.cli.
run_server`, the function behind `langgraph dev`. Every replica on the same DATABASE_URI
and REDIS_URI serves the same threads, runs and assistants. Settings come from the
environment and from `.env` in the working directory, as for the `shopping-planner` CLI.

The runtime migrates its schema and sets up the checkpointer's and the store's tables at
start-up without a lock, so replicas starting together on an empty database collide; this
command does that set-up first, under the CLI's PostgreSQL advisory lock, and starts the
server with LG_RUNTIME_PG_AUTO_MIGRATE=false. Set that variable yourself to leave the
runtime's schema to a job of your own (`langgraph-runtime-pg-migrate upgrade`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import traceback
from importlib.util import find_spec
from pathlib import Path

from catalog.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, exit_code_of
from catalog.version import add_version_option
from graph.errors import ShoppingError

# The graph langgraph.json names, by module, so no source checkout is needed.
GRAPHS = {"shopping_planner": "graph.builder:graph"}
AUTO_MIGRATE = "LG_RUNTIME_PG_AUTO_MIGRATE"
HEARTBEAT = "LG_BG_JOB_HEARTBEAT"  # the runtime's run heartbeat, in seconds


class ReplicaRefused(ShoppingError):
    """What the replica cannot start with, in one line."""

    exit_code = EXIT_BAD_INPUT


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shopping-planner-replica",
        description="Serve the shopping planner with the LangGraph API server on PostgreSQL "
        "(DATABASE_URI) and Redis (REDIS_URI), one replica per process (docs/scaling.md).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port", type=int, default=2024, help="port to listen on; a busy one is refused"
    )
    parser.add_argument("--jobs", type=int, default=10, help="runs at a time (default 10)")
    parser.add_argument(
        "--heartbeat",
        type=float,
        metavar="SECONDS",
        help=f"run heartbeat ({HEARTBEAT}, runtime default 120): another replica takes over "
        "a dead replica's run within about 4 heartbeats",
    )
    parser.add_argument(
        "--config", type=Path, help="serve the graphs of this langgraph.json instead"
    )
    parser.add_argument("--log-level", default="WARNING", help="the server's (default WARNING)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_option(parser)
    return parser


def graphs(config: Path | None) -> dict[str, str]:
    """The graphs to serve: this package's, or those of `config` with their paths made
    absolute (the server may run anywhere)."""
    if config is None:
        return GRAPHS
    try:
        found: dict[str, str] = json.loads(config.read_text())["graphs"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ReplicaRefused(f"cannot read the graphs of {config}: {error}") from None
    return {name: str((config.parent / path).resolve()) for name, path in found.items()}


def check_port_free(host: str, port: int) -> None:
    """The server takes another port when its own is busy; a replica behind a load
    balancer must not, so a busy port is refused here."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ShoppingError(f"cannot listen on {host}:{port}: {error.strerror}") from None


def prepare_database(database_uri: str, redis_uri: str) -> None:
    """Reach Redis, then do what the runtime sets up at start-up one replica at a time:
    its Alembic schema (unless LG_RUNTIME_PG_AUTO_MIGRATE is off), the checkpointer's
    tables and the store's. Each step finds what an earlier replica did and does nothing."""
    import psycopg
    import redis
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore
    from langgraph_runtime_pg.database import to_psycopg_uri
    from langgraph_runtime_pg.migrate import upgrade_head
    from psycopg.rows import dict_row

    from catalog.postgres import connect_settings, reason_line
    from graph.runs.checkpoint import postgres_setup_lock

    try:
        redis.Redis.from_url(redis_uri, socket_timeout=5).ping()
    except (redis.RedisError, ValueError) as error:
        raise ShoppingError(f"cannot reach REDIS_URI: {error}") from None
    url = to_psycopg_uri(database_uri)
    try:
        conn = psycopg.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row, **connect_settings(url)
        )
    except psycopg.Error as error:
        raise ShoppingError(f"cannot reach DATABASE_URI: {reason_line(error)}") from None
    # Autocommit: the checkpointer's setup runs CREATE INDEX CONCURRENTLY.
    with conn, postgres_setup_lock(conn):
        if os.environ.get(AUTO_MIGRATE, "true").strip().lower() not in ("0", "false", "no", "off"):
            upgrade_head(database_uri)
        PostgresSaver(conn).setup()
        PostgresStore(conn).setup()


def serve(args: argparse.Namespace) -> None:
    from graph.context import load_env_file

    load_env_file()  # real variables win, as for the CLI
    # Quiet and offline unless the environment or .env says otherwise: no call to PyPI for
    # the server's version check. Tracing and the usage beacon are off unless
    # LANGSMITH_TRACING or a licence key is set, so nothing else is needed for them.
    os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
    if args.heartbeat is not None:
        os.environ[HEARTBEAT] = str(args.heartbeat)
    missing = [name for name in ("DATABASE_URI", "REDIS_URI") if not os.environ.get(name)]
    if missing:
        raise ReplicaRefused(f"set {' and '.join(missing)} in the environment or .env")
    served = graphs(args.config)
    # Looked up, not imported: the runtime takes seconds to import, a refusal should not.
    missing = [name for name in ("langgraph_api", "langgraph_runtime_pg") if not find_spec(name)]
    if missing:
        raise ReplicaRefused(
            f"the API server is not installed ({', '.join(missing)} missing): "
            "pip install 'shopping-planner[server]'"
        )
    check_port_free(args.host, args.port)
    prepare_database(os.environ["DATABASE_URI"], os.environ["REDIS_URI"])
    from langgraph_api.cli import run_server

    os.environ[AUTO_MIGRATE] = "false"  # done above, under the lock
    # The `langgraph dev` banner (an in-memory server, a hosted Studio link) is an info
    # record of this logger: it says nothing true of a replica.
    logging.getLogger("langgraph_api.cli").setLevel(logging.WARNING)
    run_server(
        args.host,
        args.port,
        False,
        served,
        n_jobs_per_worker=args.jobs,
        open_browser=False,
        runtime_edition="pg",  # an edition its Literal omits
        server_level=args.log_level,
        __database_uri__=os.environ["DATABASE_URI"],
        __redis_uri__=os.environ["REDIS_URI"],
        __migrations_path__=None,
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        serve(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as error:
        if args.debug:
            traceback.print_exc()
        # An error of ours (it names its exit code) says what to do; any other names itself.
        known = hasattr(error, "exit_code")
        shown = str(error) if known else f"{type(error).__name__}: {error} (--debug shows where)"
        sys.stderr.write(f"error: {' '.join(shown.split())}\n")
        return exit_code_of(error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
