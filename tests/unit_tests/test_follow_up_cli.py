"""`python -m graph.run --follow-up THREAD "a cheaper one"` as a real CLI process against
the fake OpenAI-compatible server (tests/fake_openai_server.py), on the shipped catalog:
the chain in --list, --history and --json, --follow-up last, --resume of a follow-up, and
the refusals, each one line with no request to the server (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server

BAG_REQUEST = "a camera bag for hiking under $60"
BAG_PLAN: dict[str, Any] = {
    "goal": "A hiking camera bag under $60.",
    "steps": [{"query": "hiking camera bag"}, {"query": None, "action": "Pick the bag"}],
}
CHEAPER_PLAN: dict[str, Any] = {
    "follow_up": {"kind": "cheaper", "item": "hiking camera bag", "wants": None},
    "goal": "A cheaper hiking camera bag.",
    "steps": [{"query": "camera bag"}, {"query": None, "action": "Pick the bag"}],
}
PICK: dict[str, Any] = {"answer": "The best ranked.", "product_ids": []}


def script(*plans: dict[str, Any]) -> FakeScript:
    """Plans with the planner's reading of a follow-up answer the follow-up runs."""
    return FakeScript(
        replies={
            "Plan": [p for p in plans if "follow_up" not in p],
            "FollowUpPlan": [p for p in plans if "follow_up" in p],
            "ReasoningAnswer": [PICK] * 6,
        }
    )


def run_json(url: str, data_dir: Path, *args: str) -> dict[str, Any]:
    done = graph_run_process(url, data_dir, *args, "--yes", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def one_line_refusal(done: Any, said: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output and said in output, output
    assert len([line for line in output.splitlines() if line.strip()]) == 1, output


def test_a_chain_of_follow_ups_shows_in_list_history_and_json(isolated_data_dir: Path) -> None:
    fake = script(BAG_PLAN, CHEAPER_PLAN)
    with fake_openai_server(fake) as url:
        first = run_json(url, isolated_data_dir, BAG_REQUEST, "--thread", "bag")
        second = run_json(url, isolated_data_dir, "a cheaper one", "--follow-up", "bag")
        thread = second["thread_id"]
        listed = graph_run_process(url, isolated_data_dir, "--list", COLUMNS="200")
        listed_json = graph_run_process(url, isolated_data_dir, "--list", "--json")
        history = graph_run_process(url, isolated_data_dir, "--history", thread, COLUMNS="200")
        history_json = graph_run_process(url, isolated_data_dir, "--history", thread, "--json")
    first_price = first["outcome"]["picks"][0]["price"]
    assert second["follow_up_of"] == "bag" and first["follow_up_of"] is None
    (search, _) = second["plan"]["steps"]
    assert search["max_price"] < first_price
    assert second["outcome"]["picks"][0]["price"] < first_price
    assert second["follow_up"]["kind"] == "cheaper"
    # --list: the follow-up right under the run it follows, its request indented.
    lines = listed.stdout.splitlines()
    parent_line = next(n for n, line in enumerate(lines) if BAG_REQUEST in line)
    assert "↳ a cheaper one" in lines[parent_line + 1] and thread in lines[parent_line + 1]
    runs = {run["thread_id"]: run for run in json.loads(listed_json.stdout)}
    assert runs[thread]["follow_up_of"] == "bag" and runs["bag"]["follow_up_of"] is None
    # --history: the chain, each request with its plan and outcome.
    assert history.returncode == 0, history.stdout + history.stderr
    assert "1. bag: " + BAG_REQUEST in history.stdout
    assert f"2. {thread}: a cheaper one" in history.stdout
    assert "outcome: " + first["outcome"]["picks"][0]["id"] in history.stdout
    assert "from the previous run: cheaper than" in history.stdout
    chain = json.loads(history_json.stdout)
    assert chain["follow_up_of"] == "bag"
    assert [link["thread_id"] for link in chain["chain"]] == ["bag", thread]
    # "cheaper" searches the item as the first run did.
    assert chain["chain"][0]["picks"] and chain["chain"][1]["queries"] == ["hiking camera bag"]


def test_the_plan_shows_the_carried_cap_and_a_follow_up_resumes_like_any_run(
    isolated_data_dir: Path,
) -> None:
    fake = script(BAG_PLAN, CHEAPER_PLAN)
    with fake_openai_server(fake) as url:
        run_json(url, isolated_data_dir, BAG_REQUEST, "--thread", "bag")
        # No terminal to ask: the follow-up pauses at its plan, shown with what carried over.
        paused = graph_run_process(
            url, isolated_data_dir, "a cheaper one", "--follow-up", "last", "--thread", "next",
            COLUMNS="200",
        )  # fmt: skip
        resumed = run_json(url, isolated_data_dir, "--resume", "next")
    assert paused.returncode == 3, paused.stdout + paused.stderr
    assert "(from the previous run)" in paused.stdout
    assert "from the previous run: cheaper than" in paused.stdout
    assert resumed["follow_up_of"] == "bag" and resumed["outcome"]["picks"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--follow-up", "nowhere", "a cheaper one"], "no run with thread id 'nowhere'"),
        (["--follow-up", "last", "a cheaper one"], "no finished run to follow up"),
        (["--follow-up", "bag"], "--follow-up THREAD needs the follow-up request"),
        (["--follow-up", "bag", "--list"], "--follow-up THREAD goes with a follow-up request"),
        (["--follow-up", "bag", "--resume", "bag"], "not with --resume"),
        (["--follow-up", "bad\x1bid", "a cheaper one"], "a thread id must be"),
    ],
)
def test_a_follow_up_with_nothing_to_follow_is_one_line_and_no_llm_call(
    isolated_data_dir: Path, args: list[str], said: str
) -> None:
    fake = script()
    with fake_openai_server(fake) as url:
        done = graph_run_process(url, isolated_data_dir, *args, "--yes")
    one_line_refusal(done, said)
    assert fake.requests == []


def test_a_follow_up_on_a_run_paused_at_approval_is_refused_with_no_llm_call(
    isolated_data_dir: Path,
) -> None:
    fake = script(BAG_PLAN)
    with fake_openai_server(fake) as url:
        paused = graph_run_process(url, isolated_data_dir, BAG_REQUEST, "--thread", "bag")
        assert paused.returncode == 3
        calls = len(fake.requests)
        done = graph_run_process(url, isolated_data_dir, "a cheaper one", "--follow-up", "bag")
    one_line_refusal(done, "thread 'bag' is awaiting approval: only a finished run")
    assert len(fake.requests) == calls
