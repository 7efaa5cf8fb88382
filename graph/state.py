"""State and schemas of the planner-executor graph. Data flows one way: request -> Plan
-> StepResults -> Outcome; at approval a person may edit the Plan (PlanEdit), which then
runs, the model's kept beside it. Each plain state field has one writer node, named
beside it; the two reducer fields are append-only logs (see State). A State is always of
this version's shape: building one brings values an older version saved up to it
(State.upgrade_older_shapes), so the nodes and every reader of a saved run assume it."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field

from catalog.text import word_stems
from graph import schemas
from graph.reading.request import reading_of
from graph.reading.stated import read_limits, validate_request
from graph.schemas import (
    ApprovalStatus,
    FollowUp,
    Outcome,
    Plan,
    PlanEdit,
    PlanRevision,
    RequestReading,
    SearchDispatch,
    StatedLimits,
    StepResult,
    Usage,
)


@dataclass(kw_only=True)
class InputState:
    """What a user supplies: the shopping request, and the finished run it follows up.

    Descriptions sit in the annotations (pydantic's Field): LangGraph builds the input
    schema Studio shows from the fields' types, and a dataclass field's metadata is not
    among them."""

    request: Annotated[str, Field(description="The shopping request, in your own words.")]
    follow_up_of: Annotated[
        str | None,
        Field(
            description="The thread id of a finished run this request follows up "
            '("a cheaper one", "and a case for it"); its limits and picks carry over.'
        ),
    ] = None


@dataclass(kw_only=True)
class State(InputState):
    """Everything the graph tracks for one run (one checkpointed thread)."""

    # An API run may send no request (input `{}`): it reads as empty, which the planner
    # refuses in one line, as the CLI does, and the thread's state stays readable.
    request: Annotated[str, Field(description="The shopping request, in your own words.")] = ""
    # Each field's writer node heads its group. The descriptions are the graph's output
    # schema's (Studio, the API) and the CLI's --json document's.
    # planner: the request as read once (graph/reading/request.py), which every later
    # node reads instead of the request; the limits the run holds to (the request's, with
    # a follow-up's carried over); its model calls, a retry and the departments question
    # included (None: one, in runs written before it was kept). The planner again (the
    # revise node) rewrites the plan, its limits, checks and calls for a change in words.
    reading: RequestReading | None = None
    stated_limits: Annotated[StatedLimits | None, Field(description="The request's limits.")] = None
    follow_up: Annotated[FollowUp | None, Field(description="What a follow-up carries.")] = None
    plan: Annotated[Plan | None, Field(description="The plan, as shown and run.")] = None
    # The planner's plan as the model wrote it, before code shaped it (None: code built
    # it): what each override of the model is measured against (graph/evals/overrides.py).
    model_plan: Plan | None = None
    plan_warnings: Annotated[list[str], Field(description="Code's checks of the plan.")] = field(
        default_factory=list
    )
    planner_usage: Annotated[Usage | None, Field(description="The planner's usage.")] = None
    planner_calls: Annotated[int | None, Field(description="The planner's model calls.")] = None
    planner_latency_s: float | None = None
    # approval: the answer, a person's edit of the plan, which runs instead of `plan` (kept
    # as the model wrote it), and why the last edit or answer sent was refused (the run
    # stays paused).
    approval: Annotated[ApprovalStatus | None, Field(description="The answer at approval.")] = None
    plan_edit: Annotated[PlanEdit | None, Field(description="A person's edit of the plan.")] = None
    edit_error: Annotated[str | None, Field(description="Why the last edit was refused.")] = None
    # approval: a change of the plan asked in words, which the revise node reads and
    # clears; revise: each version it replaced, with the words (append-only).
    revising: str | None = None
    revisions: Annotated[
        list[PlanRevision], Field(description="Each plan version changed in words."), operator.add
    ] = field(default_factory=list)
    dispatched: SearchDispatch | None = None  # executor: the search awaiting its answer
    # Append-only logs with a reducer, so each step's node adds to them: executor (a
    # reasoning step, or a search whose call failed) and record_search (a search) each
    # append one result per step; executor appends the tool call, the tool node its answer.
    step_results: Annotated[
        list[StepResult], Field(description="Each step's result."), operator.add
    ] = field(default_factory=list)
    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    # verify
    outcome: Annotated[Outcome | None, Field(description="The checked recommendation.")] = None

    def __post_init__(self) -> None:
        # A strict serializer that does not know our types (LANGGRAPH_STRICT_MSGPACK=true
        # in a server that drops the compile-time allowlist, as `langgraph dev` does)
        # loads them back as plain dicts of their fields; nodes get the models again.
        self.reading = _as_model(RequestReading, self.reading)
        self.stated_limits = _as_model(StatedLimits, self.stated_limits)
        self.follow_up = _as_model(FollowUp, self.follow_up)
        self.plan = _as_model(Plan, self.plan)
        self.model_plan = _as_model(Plan, self.model_plan)
        self.planner_usage = _as_model(Usage, self.planner_usage)
        self.plan_edit = _as_model(PlanEdit, self.plan_edit)
        self.dispatched = _as_model(SearchDispatch, self.dispatched)
        self.outcome = _as_model(Outcome, self.outcome)
        self.step_results = [_as_model(StepResult, r) for r in self.step_results]
        self.revisions = [_as_model(PlanRevision, r) for r in self.revisions]
        self.upgrade_older_shapes()

    def upgrade_older_shapes(self) -> None:
        """Fill in what an older version did not save, as this version would have it: the
        one place that knows a run's older shapes. Nothing is written back: the saved run
        stays as that version left it."""
        finished = self.outcome is not None
        if self.reading is None and (finished or self.plan is not None):
            # Saved before the planner stored its reading of the request (or its limits).
            # A run still going (paused at approval) reads its request now, keeping any
            # limits it saved; a finished one is only read by a follow-up, which gets it as
            # saved: its request as given, and no limits to carry over unless it saved them
            # (that version applied its own reading of them).
            text = self.request if finished else validate_request(self.request)
            limits = self.stated_limits or (StatedLimits() if finished else read_limits(text))
            self.reading = reading_of(text, limits)
            self.stated_limits = limits
        outcome = self.outcome
        if outcome is not None and not all(outcome.items.get(p.id) for p in outcome.picks):
            # Saved before the outcome named each pick's item (or one it could not name):
            # the search sharing most product words with its title.
            plan = self.run_plan
            queries = tuple(s.query for s in plan.search_steps if s.query) if plan else ()
            items = {
                p.id: outcome.items.get(p.id) or _item_of(p.title, queries) for p in outcome.picks
            }
            self.outcome = outcome.model_copy(update={"items": items})

    @property
    def run_plan(self) -> Plan | None:
        """The plan the executor runs (plan_that_runs)."""
        return plan_that_runs(vars(self))

    @property
    def run_plan_warnings(self) -> list[str]:
        """The code checks of the plan that runs."""
        return self.plan_edit.warnings if self.plan_edit is not None else self.plan_warnings

    @property
    def next_step(self) -> int:
        """Index of the next plan step to run: every step adds exactly one result."""
        return len(self.step_results)


@dataclass(kw_only=True)
class OutputState:
    """What a run gives back (the graph's output schema, and what `invoke` and the API's
    `runs.wait` return): the request, the plan and its checks, the answer at approval and
    any edit, each step's result (its LLM calls and usage), the checked outcome and the
    planner's usage. Not the messages or the bookkeeping between nodes; a thread's state
    still holds them. Each field is a State field, typed as there (the State's channel
    is the one LangGraph keeps)."""

    request: str
    follow_up_of: str | None = None
    stated_limits: StatedLimits | None = None
    follow_up: FollowUp | None = None
    plan: Plan | None = None
    plan_warnings: list[str] = field(default_factory=list)
    planner_usage: Usage | None = None
    planner_calls: int | None = None
    approval: ApprovalStatus | None = None
    plan_edit: PlanEdit | None = None
    edit_error: str | None = None
    revisions: Annotated[list[PlanRevision], operator.add] = field(default_factory=list)
    step_results: Annotated[list[StepResult], operator.add] = field(default_factory=list)
    outcome: Outcome | None = None


_STATE_FIELDS = frozenset(f.name for f in dataclasses.fields(State))


def state_of(values: Mapping[str, Any]) -> State:
    """The State of a run's saved values (as the checkpointer or Studio's API gives them),
    in this version's shape."""
    return State(**{k: v for k, v in values.items() if k in _STATE_FIELDS})


def _as_model(model: type[Any], value: Any) -> Any:
    return model.model_validate(value) if isinstance(value, dict) else value


def _item_of(title: str, queries: tuple[str, ...]) -> str:
    scored = [(len(word_stems(title) & word_stems(q)), -n, q) for n, q in enumerate(queries)]
    best = max(scored, default=(0, 0, ""))
    return best[2] if best[0] > 0 else ""


def plan_that_runs(values: Mapping[str, Any]) -> Plan | None:
    """The plan a run executes: a person's edit if there is one, else the model's. The one
    definition, for the State the nodes get and for a run's saved values (which Studio's
    API may hand back as plain data)."""
    edit = _as_model(PlanEdit, values.get("plan_edit"))
    return edit.plan if edit is not None else _as_model(Plan, values.get("plan"))


# Our own types in checkpointed state, as (module, name), for the serializer's msgpack
# allowlist: the strict serializer (LANGGRAPH_STRICT_MSGPACK=true, a future default)
# blocks any type not listed. Compiling under strict mode also derives them from State.
# Every record in graph.schemas is one.
STATE_TYPES = [
    (cls.__module__, cls.__name__)
    for cls in vars(schemas).values()
    if isinstance(cls, type) and issubclass(cls, BaseModel)
]
