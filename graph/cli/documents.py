"""The documents `--json` prints, as models: a run that was planned (RunDocument, filled in
by graph.cli.report.json_report) and a run an error or Ctrl-C stopped (ErrorDocument).
They are the source of the JSON Schema published as docs/run-document.schema.json
(docs/scripting.md); the field types are the graph's own models, so it cannot drift.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, TypeAdapter

from graph.cli.exits import JSON_SCHEMA_VERSION
from graph.cost import CostEstimate
from graph.runs.session import UsageTotals
from graph.schemas import FollowUp, Outcome, Plan, PlanChange, StepResult, Usage
from graph.schemas.plan import ApprovalStatus

SCHEMA_VERSION_TEXT = "goes up when a field changes meaning or goes away"


class ListedChange(PlanChange):
    """A person's change to the plan, with the sentence the CLI shows for it."""

    description: str


RunEnd = Literal["done", "rejected", "awaiting approval"]


class RunDocument(BaseModel):
    """A run that was planned: it finished, was rejected, or awaits approval."""

    # Every field is in every document, defaults included: the schema says so.
    model_config = ConfigDict(
        title="shopping-planner run document", json_schema_serialization_defaults_required=True
    )

    schema_version: int = Field(default=JSON_SCHEMA_VERSION, description=SCHEMA_VERSION_TEXT)
    status: RunEnd
    exit_code: int = Field(description="the process's exit code, repeated")
    thread_id: str
    resume: str | None = Field(description="the arguments that continue a paused run")
    request: str | None
    approval: ApprovalStatus | None
    # SerializeAsAny: a follow-up's plan keeps the statement the model wrote with it.
    plan: SerializeAsAny[Plan] | None = Field(description="the plan that ran: an edit, if any")
    model_plan: SerializeAsAny[Plan] | None = Field(description="the plan the model wrote")
    plan_edited: bool
    plan_changes: list[ListedChange]
    plan_warnings: list[str]
    estimate: CostEstimate | None
    planner_usage: Usage | None
    usage: UsageTotals = Field(description="usage totals, planner included")
    step_results: list[StepResult]
    outcome: Outcome | None
    follow_up_of: str | None = Field(description="the thread this run follows up")
    follow_up: FollowUp | None = Field(description="what carried over from that run")


class StoppingError(BaseModel):
    type: str = Field(description="the error's class name")
    message: str = Field(description="the line shown on stderr, secrets masked")
    resumable: bool | None = Field(
        description="true: finished steps are saved; false: nothing is; null: cannot tell"
    )


class ErrorDocument(BaseModel):
    """A run (or any --json command) an error or Ctrl-C stopped."""

    model_config = ConfigDict(
        title="shopping-planner error document", json_schema_serialization_defaults_required=True
    )

    schema_version: int = Field(default=JSON_SCHEMA_VERSION, description=SCHEMA_VERSION_TEXT)
    status: Literal["failed", "interrupted"]
    exit_code: int = Field(description="the process's exit code, repeated")
    thread_id: str | None = Field(description="the run it stopped (null before one started)")
    error: StoppingError


# What stdout holds under --json, told apart by its status.
Document = Annotated[RunDocument | ErrorDocument, Field(discriminator="status")]
DOCUMENT = TypeAdapter(Document)


def published_schema() -> str:
    """The text of docs/run-document.schema.json."""
    schema: dict[str, Any] = DOCUMENT.json_schema(mode="serialization")
    schema["title"] = "shopping-planner --json document"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m graph.cli.documents > docs/run-document.schema.json
    print(published_schema(), end="")
