"""Faults of the environment a run depends on, in the real CLI process: an odd answer from
the OpenAI-compatible server, a proxy set in .env, and the PostgreSQL checkpoint database
going away mid-run. Each is one line and exit 1 (never a traceback and exit 70), and the
run stays resumable: the line says `--resume THREAD`, and that command finishes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_process
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
