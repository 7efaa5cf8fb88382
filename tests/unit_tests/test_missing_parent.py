"""Class 3 of the third red-team round (#39): `--follow-up` naming no run fails with its
one line before any model or catalog work: no model server starts (the local provider, a
model file that is not there), no catalog opens (one that is not there either) or is
indexed, and the fake server is sent nothing. Through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server


@pytest.mark.parametrize("provider", ["local", "compatible"])
def test_a_missing_parent_fails_before_any_model_or_catalog_work(
    provider: str, tmp_path: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={})
    args = ("--follow-up", "nosuch", "a cheaper one", "--yes", "--provider", provider)
    catalog = ("--catalog", str(tmp_path / "no-such-catalog.jsonl"))
    with fake_openai_server(fake) as url:
        done = graph_run_process(
            url, isolated_data_dir, *args, *catalog, LOCAL_MODEL_PATH=str(tmp_path / "no.gguf")
        )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert output.splitlines() == [
        "error: no run with thread id 'nosuch' to follow up; see --list"
    ], output
    assert fake.requests == []
    # Nothing but the run store the parent was looked up in: no index, no server record.
    assert [p.name for p in isolated_data_dir.iterdir()] == ["checkpoints.sqlite"]
