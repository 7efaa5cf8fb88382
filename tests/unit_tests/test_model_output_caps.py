"""Every field the model writes is capped: a plan over a cap is rejected (after the one
retry that shows the model its error), an answer over a cap is a step error, and neither
reaches a later prompt, the checkpoint or the terminal. Real CLI processes against the
fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PLAN

from graph.schemas import MAX_FEATURES, MAX_PICKED_IDS, MODEL_TEXT_CAPS

BIG = 2_000_000  # the red team's 2 MB goal


def plan_with(field: str) -> dict[str, Any]:
    plan = json.loads(json.dumps(STRAP_PLAN))
    if field == "goal":
        plan["goal"] = "g" * BIG
    elif field in ("action", "query", "category"):
        plan["steps"][0][field] = field[0] * (MODEL_TEXT_CAPS[field] + 1)
    elif field == "feature":
        plan["features"] = ["f" * BIG]
    elif field == "features":
        plan["features"] = ["waterproof"] * (MAX_FEATURES + 1)
    return plan


PLAN_CASES = ["goal", "action", "query", "category", "feature", "features"]
ANSWER_CASES = {
    "answer": {"answer": "a" * BIG, "product_ids": ["strap-1"]},
    "product_ids": {"answer": "ok", "product_ids": ["strap-1"] * (MAX_PICKED_IDS + 1)},
    "product_id": {"answer": "ok", "product_ids": ["x" * BIG]},
}


def stored_bytes(data_dir: Path) -> int:
    return sum(path.stat().st_size for path in data_dir.rglob("checkpoints.sqlite*"))


@pytest.mark.parametrize("field", PLAN_CASES)
def test_a_plan_over_a_cap_is_rejected(
    field: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    broken = plan_with(field)
    fake = FakeScript(replies={"Plan": [broken, broken]})
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a camera strap under $200",
            "--yes",
            "--catalog",
            str(small_catalog_file),
            COLUMNS="400",
        )
    output = run.stdout + run.stderr
    # The plan built in code runs; code answers its pick step from its one search, and
    # no further model call is made.
    assert run.returncode == 0, output[:2000]
    assert len(fake.requests) == 2
    assert "the planner returned no valid plan" in output and "the cap is" in output
    assert len(output) < 10_000  # the broken text is not shown whole
    # The retry shows the model its error, not its megabytes.
    retry_prompt = json.dumps(fake.requests[1]["messages"])
    assert len(retry_prompt) < 20_000
    assert stored_bytes(isolated_data_dir) < 1_000_000


@pytest.mark.parametrize("case", list(ANSWER_CASES))
def test_an_answer_over_a_cap_is_a_step_error(
    case: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [ANSWER_CASES[case]]})
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            "--json",
            "--catalog",
            str(small_catalog_file),
            SHOPPING_CODE_DECISIONS="off",  # the pick step asks the model, whose answer is checked
        )
    assert run.returncode == 0, (run.stdout + run.stderr)[:2000]
    report = json.loads(run.stdout)
    step = report["step_results"][1]
    assert "no usable answer" in step["error"] and "the cap is" in step["error"]
    # One line naming the cap, without pydantic's excerpt of the text or its help link;
    # of the refused text, only the first 300 characters are kept (as the answer).
    assert "\n" not in step["error"] and "input_value" not in step["error"], step["error"]
    assert "pydantic.dev" not in step["error"]
    assert len(step["answer"] or "") <= 300
    assert len(json.dumps(step)) < 5_000 and step["products"] == []
    assert len(run.stdout) < 50_000
    assert stored_bytes(isolated_data_dir) < 1_000_000


def test_an_answer_over_its_cap_is_not_stored_in_the_checkpoint(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: a 100,000-character answer was refused by its 4,000-character cap, yet its
    text was stored in the checkpoint (far under the 1 MB the test above allows)."""
    refused = "The answer runs on. " * 5_000
    fake = FakeScript(
        replies={
            "Plan": [dict(STRAP_PLAN)],
            "ReasoningAnswer": [{"answer": refused, "product_ids": ["strap-1"]}],
        }
    )
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url, isolated_data_dir, "a strap gift under $200", "--yes", "--json",
            "--catalog", str(small_catalog_file), SHOPPING_CODE_DECISIONS="off",
        )  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[:2000]
    assert "the cap is" in json.loads(run.stdout)["step_results"][1]["error"]
    stored = b"".join(path.read_bytes() for path in isolated_data_dir.rglob("checkpoints*"))
    assert stored, "no checkpoint found"
    # At most the 300 characters kept as the step's answer.
    assert refused[:400].encode() not in stored


CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
FIELD_CAP = {
    "goal": "goal",
    "action": "action",
    "query": "query",
    "category": "category",
    "features": "feature",
    "answer": "answer",
    "product_ids": "product_id",
}


def recorded_arguments() -> list[dict[str, Any]]:
    """The Plan and ReasoningAnswer arguments the recorded models wrote."""
    found = []
    for cassette in sorted(CASSETTES.glob("*.yaml")):
        for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
            body = interaction["response"]["body"]
            try:
                reply = json.loads(body["string"] if isinstance(body, dict) else body)
            except (TypeError, ValueError):
                continue
            for choice in reply.get("choices", []):
                message = choice.get("message") or {}
                texts = [c["function"]["arguments"] for c in message.get("tool_calls") or []]
                texts += [message["content"]] if message.get("content") else []
                for text in texts:
                    try:
                        found.append(json.loads(text))
                    except ValueError:
                        continue
    return found


def walk(value: Any, key: str, seen: dict[str, int], counts: dict[str, int]) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            walk(item, name, seen, counts)
    elif isinstance(value, list):
        counts[key] = max(counts.get(key, 0), len(value))
        for item in value:
            walk(item, key, seen, counts)
    elif isinstance(value, str):
        seen[key] = max(seen.get(key, 0), len(value))


def test_the_recorded_runs_stay_far_below_every_cap() -> None:
    longest: dict[str, int] = {}
    counts: dict[str, int] = {}
    arguments = recorded_arguments()
    assert len(arguments) >= 40  # the cassettes were read (43 recorded replies)
    for value in arguments:
        walk(value, "", longest, counts)
    for field, cap in FIELD_CAP.items():
        # At least 4x headroom, so replays never come near a cap.
        assert MODEL_TEXT_CAPS[cap] >= 4 * longest.get(field, 0), (field, longest.get(field))
    assert 2 * counts.get("features", 0) <= MAX_FEATURES
    assert 4 * counts.get("product_ids", 0) <= MAX_PICKED_IDS
