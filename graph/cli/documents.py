"""The documents `--json` prints, as models: a run that was planned (RunDocument, filled in
by graph.cli.report.json_report) and a run an error or Ctrl-C stopped (ErrorDocument).
They are the source of the JSON Schema published as docs/run-document.schema.json
(docs/scripting.md); the field types are the graph's own models, so it cannot drift.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.fields import FieldInfo

from catalog.exits import EXIT_OK, stdout_refusals_in_one_line
from catalog.terminal import STDOUT
from graph.cli.exits import JSON_SCHEMA_VERSION
from graph.cost import CostEstimate
from graph.runs.session import UsageTotals
from graph.schemas import (
    ApprovalStatus,
    FollowUp,
    Outcome,
    Plan,
    PlanChange,
    PlanRevision,
    PlanStep,
    StepResult,
    Usage,
)
from graph.state import State

SCHEMA_VERSION_TEXT = "goes up when a field changes meaning or goes away"
# The published file's `$id`: a name, not a place (the project has no home URL yet),
# that changes with the version of the documents' shape.
SCHEMA_ID = f"urn:shopping-planner:run-document:{JSON_SCHEMA_VERSION}"
_STATE = get_type_hints(State, include_extras=True)


def _as_output(name: str) -> Any:
    """A field the document shares with the graph's output, described as there."""
    (said,) = (meta for meta in _STATE[name].__metadata__ if isinstance(meta, FieldInfo))
    return Field(description=said.description)


# The plan as printed, not as the model is shown it (model_facing_schema leaves out the
# fields code writes: budget, pick, built_in_code, each step's filled_from_request).
# extra "ignore": a field added later (or another version's) breaks no contract.
_PRINTED = ConfigDict(json_schema_extra=None, extra="ignore")


class PrintedStep(PlanStep):
    model_config = _PRINTED


class PrintedPlan(Plan):
    model_config = _PRINTED

    # A Plan's steps, printed whole: a list of the subclass (mypy would want it covariant).
    steps: list[PrintedStep] = Field(  # type: ignore[assignment]
        description=Plan.model_fields["steps"].description
    )


@overload
def printed(plan: Plan | dict[str, Any]) -> PrintedPlan: ...
@overload
def printed(plan: None) -> None: ...
def printed(plan: Plan | dict[str, Any] | None) -> PrintedPlan | None:
    """A run's plan (as the graph keeps it, or as the API hands it back) as printed, not
    checked again: a plan an older version saved prints as it was, never as a crash."""
    if plan is None:
        return None
    fields = plan.model_dump() if isinstance(plan, Plan) else dict(plan)
    steps = [PrintedStep.model_construct(**step) for step in fields.pop("steps", [])]
    return PrintedPlan.model_construct(steps=steps, **fields)


class ListedChange(PlanChange):
    """A person's change to the plan, with the sentence the CLI shows for it."""

    description: str


class ListedRevision(PlanRevision):
    """A change of the plan asked in words at approval, as the approval and --history
    show it: the version it led to, the version it changed, the words, what changed."""

    version: int = Field(description="the plan version the words led to: 2 for the first")
    before: PrintedPlan
    changes: list[ListedChange]  # type: ignore[assignment]


RunEnd = Literal["done", "rejected", "awaiting approval"]


class RunDocument(BaseModel):
    """A run that was planned: it finished, was rejected, or awaits approval."""

    # Every field is in every document, defaults included: the schema says so.
    model_config = ConfigDict(
        title="shopping-planner run document", json_schema_serialization_defaults_required=True
    )

    schema_version: int = Field(default=JSON_SCHEMA_VERSION, description=SCHEMA_VERSION_TEXT)
    status: RunEnd = Field(description="done, rejected, or awaiting approval (paused)")
    exit_code: int = Field(description="the process's exit code, repeated")
    thread_id: str = Field(description="the run's thread: --resume, --history, --follow-up")
    resume: str | None = Field(description="the arguments that continue a paused run")
    request: str | None = _as_output("request")
    approval: ApprovalStatus | None = _as_output("approval")
    plan: PrintedPlan | None = Field(description="the plan that ran: an edit, if any")
    model_plan: PrintedPlan | None = _as_output("plan")
    plan_edited: bool = Field(description="a person edited the plan at approval")
    plan_changes: list[ListedChange] = Field(description="the edit's changes to model_plan")
    plan_warnings: list[str] = Field(description="code's checks of the plan that ran")
    revisions: list[ListedRevision] = Field(
        description="each change asked in words, in turn; model_plan is the last version"
    )
    estimate: CostEstimate | None = Field(description="the plan's cost, estimated at approval")
    planner_usage: Usage | None = _as_output("planner_usage")
    usage: UsageTotals = Field(description="usage totals, planner included")
    step_results: list[StepResult] = _as_output("step_results")
    outcome: Outcome | None = _as_output("outcome")
    follow_up_of: str | None = _as_output("follow_up_of")
    follow_up: FollowUp | None = _as_output("follow_up")


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
    status: Literal["failed", "interrupted"] = Field(description="failed, or interrupted by Ctrl-C")
    exit_code: int = Field(description="the process's exit code, repeated")
    thread_id: str | None = Field(description="the run it stopped (null before one started)")
    error: StoppingError = Field(description="what stopped it")


# What stdout holds under --json, told apart by its status.
Document = Annotated[RunDocument | ErrorDocument, Field(discriminator="status")]
DOCUMENT = TypeAdapter(Document)


def published_schema() -> str:
    """The text of docs/run-document.schema.json."""
    schema: dict[str, Any] = DOCUMENT.json_schema(mode="serialization")
    schema.update(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_ID,
            "title": "shopping-planner --json document",
        }
    )
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


@stdout_refusals_in_one_line
def main() -> int:
    """`python -m graph.cli.documents > docs/run-document.schema.json`"""
    print(published_schema(), end="", file=STDOUT)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
