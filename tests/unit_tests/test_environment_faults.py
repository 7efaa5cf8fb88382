"""Faults of the environment a run depends on, in the real CLI process: an odd answer from
the OpenAI-compatible server, a proxy set in .env, and the PostgreSQL checkpoint database
going away mid-run. Each is one line and exit 1 (never a traceback and exit 70), and the
run stays resumable: the line says `--resume THREAD`, and that command finishes it.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from cli_runs import graph_run_process, start_graph_run
from conftest import PRIVATE_POSTGRES
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN

from catalog.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK


def strap_script(**options: Any) -> FakeScript:
    return FakeScript(
        replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]}, **options
    )


def one_error_line(output: str) -> str:
    assert "Traceback" not in output, output
    [line] = [line for line in output.splitlines() if line.startswith("error:")]
    return line


RUN = ("a strap gift under $200", "-y", "--thread", "t")


@pytest.mark.parametrize(
    ("fault", "named"),
    [
        ("choices_null", 'an answer with no choices ("choices": null)'),
        ("double_encoded", 'tool call arguments that are not a JSON object: "{\\"'),
    ],
)
def test_an_answer_the_server_garbles_is_one_line_and_the_run_resumes(
    fault: str,
    named: str,
    small_catalog_file: Path,
    isolated_data_dir: Path,
) -> None:
    # The plan comes back whole; the pick step's answer is the garbled one.
    fake = strap_script(faults=["ok", fault])
    args = (*RUN, "--catalog", str(small_catalog_file))
    asks_the_model = {"SHOPPING_CODE_DECISIONS": "off"}
    with fake_openai_server(fake) as url:
        failed = graph_run_process(url, isolated_data_dir, *args, **asks_the_model)
        line = one_error_line(failed.stdout + failed.stderr)
        assert failed.returncode == EXIT_FAILED, failed.stdout + failed.stderr
        assert f"the LLM server sent {named}" in line, line
        assert "--resume t" in line, line
        assert len(fake.requests) == 2  # not retried: the same answer would come back
        # The plan and the search were saved: --resume asks the server again and finishes.
        fake.replies["ReasoningAnswer"] = [dict(STRAP_PICK)]
        resumed = graph_run_process(url, isolated_data_dir, "--resume", "t", **asks_the_model)
        assert resumed.returncode == EXIT_OK, resumed.stdout + resumed.stderr
        assert "strap-1" in resumed.stdout and len(fake.requests) == 3


def test_a_proxy_set_in_dot_env_carries_the_calls(
    small_catalog_file: Path, isolated_data_dir: Path, tmp_path: Path
) -> None:
    """OPENAI_PROXY made langchain-openai refuse the model it was built with (exit 70).
    The server's name resolves nowhere: the run finishes only through the proxy (the fake
    server answers a proxied request as any other)."""
    fake = strap_script()
    with fake_openai_server(fake) as proxy:
        (tmp_path / ".env").write_text(f"OPENAI_PROXY={proxy.removesuffix('/v1')}\n")
        run = graph_run_process(
            "http://llm.invalid/v1",
            isolated_data_dir,
            *RUN,
            "--catalog",
            str(small_catalog_file),
            cwd=tmp_path,
            SHOPPING_CODE_DECISIONS="off",
        )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert "strap-1" in run.stdout
    assert len(fake.requests) == 2


def test_a_proxy_that_is_no_url_is_one_line(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    run = graph_run_process(
        "http://llm.invalid/v1",
        isolated_data_dir,
        *RUN,
        "--catalog",
        str(small_catalog_file),
        OPENAI_PROXY="ftp://proxy.invalid",
    )
    line = one_error_line(run.stdout + run.stderr)
    assert run.returncode == EXIT_BAD_INPUT and "OPENAI_PROXY is not a proxy URL" in line, line


# --- the PostgreSQL checkpoint database failing while a run waits for the model ---


@pytest.fixture
def own_database() -> Iterator[tuple[str, Callable[[str], None]]]:
    """A database of the test's own, owned by a role of its own (the server's superuser
    passes every connection limit): its --db URL, and what runs SQL as the superuser."""
    import psycopg

    name = f"faults_{uuid.uuid4().hex[:8]}"
    url = urlsplit(PRIVATE_POSTGRES.new_database(name))

    def as_superuser(sql: str) -> None:  # from the server's own database
        with psycopg.connect(urlunsplit(url._replace(path="/postgres")), autocommit=True) as conn:
            conn.execute(sql)

    as_superuser(f"CREATE ROLE {name} LOGIN")
    as_superuser(f"ALTER DATABASE {name} OWNER TO {name}")
    with psycopg.connect(urlunsplit(url), autocommit=True) as conn:
        conn.execute(f"ALTER SCHEMA public OWNER TO {name}")
    yield urlunsplit(url._replace(netloc=f"{name}@")), as_superuser
    as_superuser(f"ALTER ROLE {name} CONNECTION LIMIT -1")
    as_superuser(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


def end_sessions(name: str) -> str:
    """What a server restart or crash does to its clients: every session ended."""
    return f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{name}'"


def run_with_fault(
    db: str, catalog: Path, data_dir: Path, fake: FakeScript, fault: Callable[[], None]
) -> subprocess.CompletedProcess[str]:
    """A run on `db` with `fault` done while its pick step waits for the model."""
    with fake_openai_server(fake) as url:
        args = (*RUN, "--catalog", str(catalog), "--db", db)
        process = start_graph_run(url, data_dir, *args, **STORE_WAIT)
        deadline = time.monotonic() + 60
        while not fake.calls_for("ReasoningAnswer") and process.poll() is None:
            assert time.monotonic() < deadline, "the run never reached its pick step"
            time.sleep(0.05)
        fault()
        out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


# The pick step asks the model (and waits for it), and a write waits 2 s for a connection.
STORE_WAIT = {"SHOPPING_CODE_DECISIONS": "off", "SHOPPING_CHECKPOINT_BUSY_TIMEOUT": "2"}


def test_a_run_goes_on_across_a_database_restart(
    own_database: tuple[str, Callable[[str], None]],
    small_catalog_file: Path,
    isolated_data_dir: Path,
) -> None:
    """The pool replaces the connections a restart closed (check_connection) before the
    next checkpoint write uses one: the run finishes, exit 0."""
    db, as_superuser = own_database
    role = urlsplit(db).username or ""
    fake = strap_script(delays={"ReasoningAnswer": 1.0})
    run = run_with_fault(
        db, small_catalog_file, isolated_data_dir, fake, lambda: as_superuser(end_sessions(role))
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert "strap-1" in run.stdout and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("fault", "named"),
    [
        # Stopped (or crashed, and not back): no session left, and none to be had.
        ("ALTER DATABASE {name} ALLOW_CONNECTIONS false", "is not currently accepting"),
        ("ALTER ROLE {name} CONNECTION LIMIT 0", "too many connections"),
        ("DROP TABLE {name}.public.checkpoint_writes", 'relation "checkpoint_writes"'),
    ],
    ids=["stopped", "too-many-clients", "dropped-table"],
)
def test_a_database_failing_mid_run_is_one_line_and_the_run_resumes(
    fault: str,
    named: str,
    own_database: tuple[str, Callable[[str], None]],
    small_catalog_file: Path,
    isolated_data_dir: Path,
) -> None:
    db, as_superuser = own_database
    role = urlsplit(db).username or ""
    dropped = fault.startswith("DROP")

    def break_it() -> None:
        if dropped:  # as the owner, in its own database
            import psycopg

            with psycopg.connect(db, autocommit=True) as conn:
                conn.execute("DROP TABLE checkpoint_writes")
            return
        as_superuser(fault.format(name=role))
        as_superuser(end_sessions(role))

    fake = strap_script(delays={"ReasoningAnswer": 1.0})
    failed = run_with_fault(db, small_catalog_file, isolated_data_dir, fake, break_it)
    line = one_error_line(failed.stdout + failed.stderr)
    assert failed.returncode == EXIT_FAILED, failed.stdout + failed.stderr
    assert line.startswith("error: checkpoint database postgresql://***@/"), line
    assert named in line and "--resume t" in line, line
    assert failed.stderr.strip() == "", failed.stderr  # nothing logged beside the line
    if dropped:
        return  # nothing to resume into: the table is gone
    as_superuser(f"ALTER ROLE {role} CONNECTION LIMIT -1")
    as_superuser(f"ALTER DATABASE {role} ALLOW_CONNECTIONS true")
    fake.replies["ReasoningAnswer"] = [dict(STRAP_PICK)]
    with fake_openai_server(fake) as url:
        resumed = graph_run_process(
            url, isolated_data_dir, "--resume", "t", "--db", db, **STORE_WAIT
        )
    assert resumed.returncode == EXIT_OK, resumed.stdout + resumed.stderr
    assert "strap-1" in resumed.stdout
