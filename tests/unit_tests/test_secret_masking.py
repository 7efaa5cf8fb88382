"""Secrets stay out of every output: --debug tracebacks, provider error lines for a base
URL holding credentials, and model output that echoes the key (shown, --json, stored).
Real CLI processes against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN

# The scripted reasoning replies are part of what is checked (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("pick_steps_ask_the_model")


# Not shaped like an OpenAI key, so only masking of the configured value can hide it.
KEY = "k3y-Secret-Value-0123456789"
PASSWORD = "pa55-w0rd-XYZ987"


def outputs(run: object) -> str:
    return run.stdout + run.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_an_error_body_echoing_the_key_is_masked_with_and_without_debug(
    debug: bool, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]}, faults=["401"])
    flags = ["--debug"] if debug else []
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            *flags,
            "--catalog",
            str(small_catalog_file),
            OPENAI_API_KEY=KEY,
        )
    assert run.returncode == 1  # the provider failed, --debug or not
    assert "Incorrect API key provided: ***" in outputs(run)
    assert KEY not in outputs(run)
    assert ("Traceback" in run.stderr) is debug


@pytest.mark.parametrize("fault", ["500", "drop", "401"])
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_credentials_in_the_base_url_never_appear(
    fault: str, debug: bool, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]}, faults=[fault] * 3)
    flags = ["--debug"] if debug else []
    with fake_openai_server(fake) as url:
        leaky = url.replace("http://", f"http://shopper:{PASSWORD}@")
        run = graph_run_process(
            leaky,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            *flags,
            "--catalog",
            str(small_catalog_file),
            COLUMNS="400",
            OPENAI_API_KEY=KEY,
        )
    assert run.returncode == 1, outputs(run)
    assert PASSWORD not in outputs(run) and KEY not in outputs(run)
    if not debug:
        assert "error:" in run.stdout


def test_a_key_the_model_echoes_is_masked_before_it_is_stored_or_shown(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    plan = json.loads(json.dumps(STRAP_PLAN))
    plan["goal"] = f"Gift (key {KEY})"
    plan["features"] = [f"works with {KEY}"]
    plan["steps"][0]["action"] = f"Find straps for sk-live-ABCDEFGHIJKLMNOP and {KEY}"
    plan["steps"][1]["action"] = f"Pick one {KEY}"
    answer = {**STRAP_PICK, "answer": f"The strap; your key is {KEY}", "product_ids": ["strap-1"]}
    db = isolated_data_dir / "c.sqlite"
    for flags in ([], ["--json"]):
        fake = FakeScript(replies={"Plan": [dict(plan)], "ReasoningAnswer": [dict(answer)]})
        with fake_openai_server(fake) as url:
            run = graph_run_process(
                url,
                isolated_data_dir,
                "a strap gift under $200",
                "--yes",
                *flags,
                "--db",
                str(db),
                "--catalog",
                str(small_catalog_file),
                OPENAI_API_KEY=KEY,
            )
        assert run.returncode == 0, outputs(run)
        assert KEY not in outputs(run) and "sk-live-ABCDEFGHIJKLMNOP" not in outputs(run)
        assert "***" in run.stdout
    report = json.loads(run.stdout)
    assert report["plan"]["goal"] == "Gift (key ***)"
    assert report["step_results"][1]["answer"] == "The strap; your key is ***"
    for stored in db.parent.glob("c.sqlite*"):
        assert KEY.encode() not in stored.read_bytes(), stored.name


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "PGPASSWORD"])
def test_a_key_pasted_into_the_request_is_masked_where_the_request_enters(
    variable: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: the request is masked once, before it is stored, shown, listed or sent: no
    checkpoint byte, no --history, no report (its missing items included) holds the key,
    nor the database password libpq reads from the environment."""
    db = isolated_data_dir / "c.sqlite"
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]})
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url, isolated_data_dir, f"a strap gift under $200 and {KEY}", "--yes", "--json",
            "--db", str(db), "--catalog", str(small_catalog_file), **{variable: KEY},
        )  # fmt: skip
        assert run.returncode == 0, outputs(run)
        thread = json.loads(run.stdout)["thread_id"]
        shown = [outputs(run)] + [
            outputs(graph_run_process(url, isolated_data_dir, *flags, "--db", str(db)))
            for flags in (["--history", thread, "--json"], ["--history", thread], ["--list"])
        ]
    sent = json.dumps(fake.requests)
    assert "***" in sent and "***" in shown[1]  # the request is there, masked
    # Its first word, as lower-cased and split a missing item named it ('k3y secret value').
    for text in [*shown, sent]:
        assert "k3y" not in text.lower()
    for stored in db.parent.glob("c.sqlite*"):
        assert b"k3y" not in stored.read_bytes().lower(), stored.name


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
@pytest.mark.parametrize(
    "url",
    [
        "postgresql://shopper:pa55/w0rd-XYZ987@127.0.0.1:1/db",
        "postgresql://shopper:pa55@w0rd-XYZ987@127.0.0.1:1/db",
        "postgresql://127.0.0.1:1/db?user=shopper&password=pa55-w0rd-XYZ987",
        "postgresql://shopper@127.0.0.1:1/db?sslpassword=pa55%2Fw0rd-XYZ987&connect_timeout=5",
    ],
    ids=["raw-slash", "raw-at", "query", "query-encoded"],
)
def test_a_database_password_in_any_url_form_is_masked(
    url: str, debug: bool, isolated_data_dir: Path
) -> None:
    """#43: a password with a raw / or @ (which the driver splits, printing a piece as a
    host), or given as a query parameter, was printed in the error line."""
    flags = ["--debug"] if debug else []
    run = graph_run_process("", isolated_data_dir, "--list", *flags, CHECKPOINT_URL=url)
    assert run.returncode == 1, outputs(run)
    assert "cannot use checkpoint database postgresql://" in outputs(run)
    assert "w0rd" not in outputs(run)


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_a_secret_in_the_base_urls_query_is_masked(
    debug: bool, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]}, faults=["401"])
    flags = ["--debug"] if debug else []
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            f"{url}?api-key={PASSWORD}", isolated_data_dir, "a strap gift", "--yes", *flags,
            "--catalog", str(small_catalog_file), COLUMNS="400",
        )  # fmt: skip
    assert run.returncode == 1, outputs(run)
    assert "api-key=***" in outputs(run) and PASSWORD not in outputs(run)


@pytest.mark.parametrize(
    "setting",
    [
        {"CHECKPOINT_URL": "postgresq://shopper:pa55-w0rd-XYZ987@127.0.0.1:1/db"},
        {"CHECKPOINT_URL": "host=127.0.0.1 port=1 user=shopper password=pa55-w0rd-XYZ987"},
        {"SHOPPING_CHECKPOINT_DB": "postgresql://shopper:pa55-w0rd-XYZ987@127.0.0.1:1/db"},
        {"--db": "postgres:/shopper:pa55-w0rd-XYZ987@127.0.0.1:1/db"},
    ],
    ids=["scheme-typo", "libpq-keywords", "url-as-path", "one-slash"],
)
def test_a_mistyped_database_url_is_refused_not_made_a_file(
    setting: dict[str, str], tmp_path: Path, isolated_data_dir: Path
) -> None:
    """#43: anything neither a file path nor a postgresql:// URL became a SQLite file named
    after it, password included."""
    flags = ["--db", setting.pop("--db")] if "--db" in setting else []
    run = graph_run_process("", isolated_data_dir, "--list", *flags, cwd=tmp_path, **setting)
    assert run.returncode == 2, outputs(run)  # a bad setting (docs/scripting.md)
    assert len(outputs(run).strip().splitlines()) == 1, outputs(run)
    assert "file path" in outputs(run) and "w0rd" not in outputs(run)
    assert not list(tmp_path.iterdir()) and not list(isolated_data_dir.rglob("*w0rd*"))
