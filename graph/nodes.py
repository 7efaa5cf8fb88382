"""The graph's node functions. Each returns only the state keys it changes."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from catalog import money
from graph.choosing import (
    ChoicePool,
    checked_answer,
    checked_model_picks,
    checked_outcome,
    choice_pool,
    decide_pick_step,
)
from graph.context import Context
from graph.cost import estimate_plan_cost
from graph.messages import masked_reply, raw_text_of, short_error, usage_of
from graph.parent_run import parent_in_graph, previous_run_of
from graph.prompts import (
    PLANNING_RETRY,
    executor_tool_messages,
    follow_up_kind_messages,
    names_a_product_messages,
    planner_messages,
    reasoning_messages,
)
from graph.providers.models import plain_chat_model, structured_model, tool_model
from graph.providers.retry import is_streaming_refused
from graph.providers.secrets import redact_secrets, redact_tree
from graph.reading import (
    Shelf,
    StockAnswers,
    in_shop_words,
    nearest_shelves,
    read_request,
    shelf_named_by,
    shopping_reason,
    unstocked_searches,
)
from graph.schemas import (
    FOLLOW_UP_KINDS,
    MAX_PLAN_STEPS,
    FollowUp,
    FollowUpKind,
    FollowUpPlan,
    FollowUpStatement,
    Plan,
    PlanningError,
    PlanRevision,
    PreviousRun,
    ProductSummary,
    ReasoningAnswer,
    RequestError,
    RequestReading,
    SearchDispatch,
    StepResult,
    Usage,
)
from graph.shaping import (
    HOW_TO_ANSWER,
    AnswerError,
    PlanEditError,
    carry_over,
    checked_plan,
    describe_change,
    edit_of,
    fallback_plan,
    model_read_limits,
    plan_changes,
    read_answer,
    revised_plan,
    shape_plan,
    stocked_plan,
)
from graph.state import State
from graph.tools import catalog_for, matches_over_total, search_products


def planner(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Turn the request into a Plan with structured output. No tools are bound here.

    The model's plan is then reconciled in code with the limits the request states
    (graph/reading/stated.py, graph/shaping/limits.py). If the model gives no usable plan
    twice, a plan is built in code from the request (graph/shaping/fallback.py); it still
    goes through approval. The request as read once (RequestReading) is written into
    state for the later nodes."""
    # The one reading of the request in a run; before any call, an impossible limit is
    # refused (no plan can meet it, and no search should try). A key or password pasted
    # into it is masked (the CLI's session and the API server's HTTP app did so already;
    # a caller of the graph itself may not have).
    request: object = state.request  # an API client may send any JSON value: refused
    # The shop's kinds tell a listed item from the words of a budget ("keep it under $50").
    request = redact_secrets(request) if isinstance(request, str) else request
    reading = read_request(request, catalog_for(runtime.context))
    # A follow-up: its finished parent read back, and what carries over (in code).
    # The planner states what the follow-up does to it; code checks that and carries over.
    previous = parent_in_graph(state.follow_up_of) if state.follow_up_of else None
    return _plan(reading, previous, runtime.context)


def _one_word(context: Context, messages: list[BaseMessage]) -> tuple[str, Usage]:
    """The first word, lower-cased, of the model's answer to a one-word question ("" for
    none), and the usage of the call."""
    reply = plain_chat_model(context).bind(max_tokens=4).invoke(messages)
    return next(iter(str(reply.content).lower().split()), ""), usage_of(reply)


def _read_as_open(reading: RequestReading, context: Context) -> tuple[RequestReading, Usage]:
    """The reading with what to buy left open when the model reads it so: a request that
    speaks of no gift or occasion may still describe only a person or a problem ("my
    sister works night shifts as a nurse", "mi padre se jubila"), in any wording or
    language, which the model reads and word lists do not. Code keeps it a named request
    when it, or an item it lists, names one of the shop's shelves in other words
    (shelf_named_by): "a camera strap and a camera bag" is no open question, whatever a
    small model answers. With the usage of the call; an answer that is not "no" leaves
    the request named."""
    word, usage = _one_word(context, names_a_product_messages(reading.text))
    read_open = word in ("no", "no.", "no,")
    catalog = catalog_for(context)
    named = read_open and any(
        shelf_named_by(catalog, text) is not None for text in (reading.product_text, *reading.items)
    )
    update = {"model_read_open": read_open, "open_ended": read_open and not named}
    return reading.model_copy(update=update), usage


def _read_kind(
    previous: PreviousRun, reading: RequestReading, context: Context
) -> tuple[FollowUpKind | None, Usage]:
    """The kind of follow-up (or revision) the model reads the words as, asked in one word
    with worked answers before them, and the usage of the call. A small model names the
    expected kind far more often asked so than as one field of its plan (prompts.py);
    code still checks it against the previous run (checked_statement). None: the answer
    is no kind, and the planner chooses among them."""
    word, usage = _one_word(context, follow_up_kind_messages(previous.request, reading.text))
    answer = word.strip(".,:;!")
    return (answer if answer in FOLLOW_UP_KINDS else None), usage


def revise(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The plan shown, changed as a person's words at approval ask. The planner reads the
    plan and the words as it reads a follow-up's previous run and request, and code
    carries over the limits the words do not change (carry_over); the revision goes back
    to approval, checked as the model's plan is. Words that ask for no change of a
    shopping plan, or leave it no search (the Plan schema's check), are refused with the
    reason (edit_error), and the plan shown stays."""
    assert state.plan is not None and state.stated_limits is not None
    words = state.revising or ""
    shown = previous_run_of("the plan shown", vars(state))
    try:
        planned = _plan(read_request(words), shown, runtime.context, state.plan)
    except RequestError as error:
        return {"revising": None, "edit_error": f"the change was refused: {error}"}
    # The revision's calls count in the run's usage, a refused one's too.
    spent = {
        "planner_usage": (state.planner_usage or Usage()) + planned["planner_usage"],
        "planner_calls": (state.planner_calls or 1) + planned["planner_calls"],
    }
    if why := planned.get("refused") or _unpriced_comparison(
        planned["follow_up"], planned["reading"]
    ):
        return {"revising": None, "edit_error": f"the change was refused: {why}", **spent}
    plan: Plan = planned["plan"]
    follow_up: FollowUp = planned["follow_up"]
    changes = plan_changes(state.plan, plan)
    return {
        "revising": None,
        "revisions": [PlanRevision(before=state.plan, words=words, changes=changes)],
        "plan": plan,
        "model_plan": planned.get("model_plan"),
        # The limits as the words left or changed them; carried from another run only as
        # the plan shown had them (a follow-up's).
        "stated_limits": planned["stated_limits"].model_copy(
            update={"carried": state.stated_limits.carried}
        ),
        # What carried over, in words, beside code's checks of the revision; the notes
        # speak of a previous run, which for a revision is the plan shown.
        "plan_warnings": [
            *(note.replace("the previous run", "the plan shown") for note in follow_up.notes[1:]),
            *planned["plan_warnings"],
        ],
        **spent,
    }


# What to write instead of a bare "cheaper" or "dearer" before anything is priced.
_AMOUNT_EXAMPLE = {"cheaper": "under $40", "dearer": "at least $40"}


def _unpriced_comparison(follow_up: FollowUp, reading: RequestReading) -> str | None:
    """Why a revision read as "cheaper" or "dearer" cannot be made: the plan shown has
    no pick to compare with (nothing has run), and the words state no limit of their own
    (a rating is one), so none would change while the approval showed the change as made.
    The reading is named: words the planner misread as a price change are seen as such."""
    kind = follow_up.kind
    if kind not in _AMOUNT_EXAMPLE or follow_up.replaced or reading.limits.any:
        return None
    return (
        f"read as {kind!r}, which needs an amount here: the plan has no prices yet; "
        f"say e.g. {_AMOUNT_EXAMPLE[kind]!r}"
    )


def _plan(
    reading: RequestReading,
    previous: PreviousRun | None,
    context: Context,
    shown: Plan | None = None,
) -> dict[str, Any]:
    """The planner's call and code's shaping of its plan: the planner node's, and the
    revise node's (`shown`: the plan the words change, which `previous` describes; where
    the planner writes no plan for them, "refused" says why: none is built in code)."""
    revising = shown is not None
    schema = FollowUpPlan if previous else Plan
    model = structured_model(context, schema)
    # A question before planning is one of the planner's calls, and its time the planner's:
    # a first request that speaks of no occasion is asked whether it names what to buy; a
    # follow-up's kind is read once, by a question of its own.
    started = time.perf_counter()
    kind: FollowUpKind | None = None
    usage, asked = Usage(), 0
    if previous is None and not reading.open_ended:
        reading, usage = _read_as_open(reading, context)
        asked = 1
    elif previous is not None:
        kind, usage = _read_kind(previous, reading, context)
        asked = 1
    # A gift or a hobby that names nothing the shop sells sees the shop's nearest shelves
    # (code, not a tool: the planner stays tool-free); a follow-up sees its previous run.
    # None: not open-ended (its plan's kinds are the shopper's, never replaced).
    # Where the model read the request as naming nothing to buy, a word of it that heads
    # one of the shop's kinds is the person's interest ("found his grandad's old film
    # camera", "games nights with my flatmates"): code does not overrule the model by it.
    by_words = not reading.model_read_open
    shelves = (
        nearest_shelves(
            catalog_for(context), reading.product_text, reading.limits.product_cap, by_words
        )
        if previous is None and reading.open_ended
        else None
    )
    messages = planner_messages(reading.text, previous, shelves or [], revising=revising, kind=kind)
    for attempt in (1, 2):
        try:
            result = model.invoke(messages)
        except Exception as refusal:
            if not is_streaming_refused(refusal):
                raise
            # The server cannot stream the plan as it is written: ask it plainly instead.
            model = structured_model(context, schema, plain=True)
            result = model.invoke(messages)
        raw = result.get("raw")
        usage = usage + usage_of(raw)
        plan = result.get("parsed")
        error = result.get("parsing_error") or "the model returned no plan"
        if isinstance(plan, Plan) and plan.not_shopping:
            # The model's "nothing to buy" stands only if code finds nothing to buy either;
            # words that revise a plan into none are refused.
            if revising:
                why = "the words ask for no change of a shopping plan"
                return {"refused": why, "planner_usage": usage, "planner_calls": asked + attempt}
            reason = shopping_reason(reading, plan.goal, catalog_for(context))
            if reason is not None:
                plan, error = None, reason
        if isinstance(plan, Plan):
            # A key the model echoed (from a prompt, a proxy) is masked before it is
            # stored in the checkpoint or shown.
            plan = schema.model_validate(redact_tree(plan.model_dump()))
            statement = plan.follow_up if isinstance(plan, FollowUpPlan) else None
            if statement is not None and kind is not None:
                statement = statement.model_copy(update={"kind": kind})
            plan = plan.plan() if isinstance(plan, FollowUpPlan) else plan
            calls = asked + attempt
            planned = _planned(
                reading, plan, usage, calls, started, previous, statement, shelves, context, shown
            )
            return {**planned, "model_plan": plan}
        if attempt == 2:
            if revising:
                why = f"the planner could not revise the plan ({short_error(error)})"
                return {"refused": why, "planner_usage": usage, "planner_calls": asked + attempt}
            if f"at most {MAX_PLAN_STEPS} steps" in str(error):
                raise PlanningError(
                    f"the request needs more than {MAX_PLAN_STEPS} plan steps (the limit); "
                    "ask for fewer items at once, or group them",
                    raw_text_of(raw),
                )
            # The error quotes the model's output, which may echo a key: masked.
            why = redact_tree(f"the planner returned no valid plan twice ({short_error(error)})")
            earlier = previous.queries if previous else ()
            plan = fallback_plan(reading, why, raw_text_of(raw), earlier, catalog_for(context))
            # The kind the model named when asked alone still reads the follow-up.
            read = FollowUpStatement(kind=kind) if kind is not None else None
            return _planned(
                reading, plan, usage, asked + attempt, started, previous, read, shelves, context
            )
        # One retry with the validation error shown: it fixes most numbering slips of
        # small models. This is not replanning: no step has run yet.
        messages = [
            *messages,
            HumanMessage(PLANNING_RETRY.format(error=short_error(error))),
        ]
    raise AssertionError("unreachable")


def _planned(
    reading: RequestReading,
    plan: Plan,
    usage: Usage,
    calls: int,
    started: float,
    previous: PreviousRun | None,
    statement: FollowUpStatement | None,
    shelves: list[Shelf] | None,
    context: Context,
    shown: Plan | None = None,
) -> dict[str, Any]:
    follow_up = None
    stated = reading.limits
    stocked: list[str] = []
    read_by_model: list[str] = []
    revision_notes: list[str] = []
    catalog = catalog_for(context)
    if previous is not None:
        # Checked against the shop's own products: what it wants is a feature or a product.
        follow_up, stated = carry_over(reading, previous, statement, catalog)
        if shown is not None:
            # Revised: checked search by search against the plan shown and the words.
            plan, revision_notes = revised_plan(shown, plan, follow_up, reading.text, catalog)
    else:
        # The model's cap where code read none, checked against the amounts written.
        reading, read_by_model = model_read_limits(reading, plan)
        stated = reading.limits
    known: StockAnswers = {}  # what the shop carries, asked once per search and cap
    if shelves is not None:
        # Open-ended: a search for a kind the shop lacks becomes one it has, before approval.
        plan, stocked = stocked_plan(
            catalog,
            plan,
            reading.product_text,
            stated.product_cap,
            reading.words if not reading.model_read_open else (),
            known,
        )
    shaped = shape_plan(reading, stated, plan, follow_up)
    # A follow-up's search in the shopper's own words (the model copies them: "bandas de
    # resistencia") names a shelf of the shop in its words. A first plan's searches are
    # the planner's own: there a shelf only as near by meaning lost more than it found
    # (WebShop's desk became a stand), and only its name said again counts ("SSDs").
    plan, in_words = in_shop_words(catalog, shaped.plan, known, said_again=previous is None)
    # Checked against the shop before anyone approves it: a search for a kind it lacks.
    unstocked = unstocked_searches(catalog, plan, known)
    return {
        "reading": reading,
        "stated_limits": stated,
        "follow_up": follow_up,
        "plan": plan,
        "planner_usage": usage,
        "planner_calls": calls,
        "planner_latency_s": round(time.perf_counter() - started, 3),
        "plan_warnings": [
            *read_by_model,
            *revision_notes,
            *stocked,
            *shaped.warnings,
            *in_words,
            *unstocked,
        ],
    }


def approval(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause with the plan and its cost estimate until a person approves, rejects,
    edits it, or asks in words for a change (which the revise node makes). An edit is
    checked like the model's plan (Plan schema, limit_warnings); one that fails, or an
    answer that is none of these (read_answer), is refused with its reason kept in state,
    and the run pauses here again."""
    if runtime.context.auto_approve:
        return {"approval": "approved"}
    assert state.plan is not None and state.stated_limits is not None
    estimate = estimate_plan_cost(state.plan, runtime.context)
    payload: dict[str, Any] = {
        "question": "Run this plan?",
        "how_to_answer": HOW_TO_ANSWER,
        "plan": state.plan.model_dump(mode="json"),
        "estimate": estimate.model_dump(mode="json"),
        # Checks done in code (e.g. a price limit the plan dropped): the person
        # approving must see them.
        "warnings": list(state.plan_warnings),
    }
    if state.revisions:
        # A plan changed in words is shown with what the words changed in the last version.
        last = state.revisions[-1]
        payload["revision"] = {
            "version": len(state.revisions) + 1,
            "words": last.words,
            "changes": [describe_change(change) for change in last.changes],
        }
    if state.edit_error:
        payload["error"] = state.edit_error
    decision = interrupt(payload)
    cleared: dict[str, Any] = {"edit_error": None} if state.edit_error else {}
    try:
        answer = read_answer(decision)
    except AnswerError as error:
        # Neither a clear approve, a clear reject nor an edit: refused like an invalid
        # edit (no approval written, so the routing asks here again), never a rejection.
        return {"edit_error": f"the answer was refused: {error}"}
    if answer.revise is not None:
        # No approval is written: the revise node changes the plan and asks here again.
        # A key pasted into the words is masked where they enter, as a request's is.
        return {"revising": redact_secrets(answer.revise), **cleared}
    if not answer.approved:
        return {"approval": "rejected", **cleared}
    edited = answer.plan
    if isinstance(edited, dict) and "pick" not in edited:
        # An edit sent over the API before `pick` existed keeps the plan's choice of it.
        edited = {**edited, "pick": state.plan.pick}
    if edited is None:
        return {"approval": "approved", **cleared}
    try:
        plan = checked_plan(edited, state.plan)
    except PlanEditError as error:
        # No approval is written: the routing brings the run back here, never to the
        # planner, and the next answer can fix the edit.
        return {"edit_error": f"the edited plan was refused: {error}"}
    edit = edit_of(state.stated_limits, state.plan, plan)
    return {"approval": "approved", "plan_edit": edit, **cleared}


def executor(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the next plan step. It sees that step and earlier results, never the request."""
    assert state.run_plan is not None
    context = runtime.context
    step = state.run_plan.steps[state.next_step]
    started = time.perf_counter()
    # Wall clock for a search: record_search may finish it in another process (a resume).
    dispatched_at = time.time()
    if step.is_search:
        if context.tool_mode == "direct":
            # The plan already holds the query and filters: dispatch without an LLM call.
            call = {
                "name": search_products.name,
                "args": {**step.search_arguments(), "limit": context.search_limit},
                "id": f"step-{step.step}",
                "type": "tool_call",
            }
            message: BaseMessage = AIMessage(content="", tool_calls=[call])
        else:
            model = tool_model(context, search_products)
            message = masked_reply(model.invoke(executor_tool_messages(step)))
            if not getattr(message, "tool_calls", None):
                return _finish_step(
                    StepResult(
                        step=step.step,
                        kind="search",
                        action=step.action,
                        error="the executor model made no search_products call",
                        llm_calls=1,
                        usage=usage_of(message),
                        latency_s=time.perf_counter() - started,
                    ),
                    state,
                )
        llm = context.tool_mode == "llm"
        dispatch = SearchDispatch(
            step=step.step,
            started_at=dispatched_at,
            llm_calls=1 if llm else 0,
            usage=usage_of(message) if llm else Usage(),
        )
        return {"messages": [message], "dispatched": dispatch}

    earlier = list(state.step_results)
    # Context settles code_decisions on creation; unset reads as on, its default.
    in_code = context.code_decisions is not False
    pool = _pool(state, earlier, context)
    pick = decide_pick_step(pool, step, in_code=in_code)
    if pick.decision is not None:
        # The checks alone determine the picks (graph/choosing/decided.py): no model call.
        return _finish_step(
            StepResult(
                step=step.step,
                kind="reasoning",
                action=step.action,
                answer=pick.decision.why,
                products=[c.summary for c in pick.decision.picks],
                decided_in_code=True,
                latency_s=time.perf_counter() - started,
            ),
            state,
        )
    model = structured_model(context, ReasoningAnswer, plain=True)
    reply = model.invoke(reasoning_messages(state.run_plan, step, earlier, pick.candidates))
    parsed = reply.get("parsed")
    result = StepResult(
        step=step.step,
        kind="reasoning",
        action=step.action,
        llm_calls=1,
        usage=usage_of(reply.get("raw")),
    )
    if not isinstance(parsed, ReasoningAnswer):
        why = reply.get("parsing_error") or "it answered without the structured reply asked for"
        # In one line, without pydantic's excerpt of the refused text: of that, only the
        # first 300 characters are kept (as the answer), whatever its length.
        result.error = f"the model gave no usable answer: {short_error(why)}"
        result.answer = raw_text_of(reply.get("raw"))[:300]
    else:
        result.products, result.warnings = checked_model_picks(
            parsed.product_ids, earlier, pick.candidates
        )
        # Its sentence may name only products the steps found (graph/choosing/said.py).
        result.answer, replaced = checked_answer(
            parsed.answer, [p.id for p in result.products], pool
        )
        result.warnings += replaced
    result.latency_s = time.perf_counter() - started
    return _finish_step(result, state)


def _pool(state: State, results: list[StepResult], context: Context) -> ChoicePool:
    """What the pick step and verify choose from: one pool, so both see the same."""
    assert state.run_plan is not None and state.reading is not None
    return choice_pool(
        state.run_plan, state.reading, state.follow_up, results, catalog_for(context)
    )


def _finish_step(result: StepResult, state: State) -> dict[str, Any]:
    # One result per step, so the count of results is the index of the next step. Model
    # text in it (answer, raw output, errors) is stored and shown with secrets masked.
    if result.kind == "reasoning" and not any(r.kind == "search" for r in state.step_results):
        result.warnings.append("no search had run before this step: it had no results to read")
    return {"step_results": [StepResult.model_validate(redact_tree(result.model_dump()))]}


def record_search(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Turn the ToolNode's answer for the current search step into a StepResult."""
    assert state.run_plan is not None
    step = state.run_plan.steps[state.next_step]
    tool_message = state.messages[-1]
    result = StepResult(step=step.step, kind="search", action=step.action)
    dispatch = state.dispatched
    if dispatch is not None and dispatch.step == step.step:
        result.llm_calls = dispatch.llm_calls
        result.usage = dispatch.usage
        result.latency_s = max(0.0, time.time() - dispatch.started_at)
    if not isinstance(tool_message, ToolMessage):
        result.error = "the search tool gave no answer"
    elif tool_message.status == "error":
        result.error = str(tool_message.content)
    else:
        artifact = tool_message.artifact or {}
        # The tool wrote each summary as a dict (plain data in the checkpointed message).
        result.products = [ProductSummary.model_validate(p) for p in artifact.get("products", [])]
        result.pool = [ProductSummary.model_validate(p) for p in artifact.get("pool", [])]
        result.warnings = list(artifact.get("warnings", []))
        if not result.products:
            over = matches_over_total(
                catalog_for(runtime.context), _call_arguments(state), state.run_plan.budget
            )
            result.pool = [ProductSummary.model_validate(p) for p in over]
            if over:
                result.warnings.append(
                    f"none within the {money(state.run_plan.budget or 0)} total: kept "
                    f"{len(over)} matches above it, to show how far over the cheapest is"
                )
    return _finish_step(result, state)


def _call_arguments(state: State) -> dict[str, Any]:
    """The arguments of the search call the last tool message answers."""
    answered = getattr(state.messages[-1], "tool_call_id", None)
    for message in reversed(state.messages):
        for call in getattr(message, "tool_calls", None) or []:
            if call.get("id") == answered:
                return dict(call.get("args") or {})
    return {}


def verify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Choose and check the recommendation in code (graph/choosing/outcome.py)."""
    assert state.run_plan is not None and state.stated_limits is not None
    results = list(state.step_results)
    outcome = checked_outcome(
        state.run_plan,
        _pool(state, results, runtime.context),
        results,
        stated=state.stated_limits,
        follow_up=state.follow_up,
        plan_warnings=state.run_plan_warnings,
        catalog=catalog_for(runtime.context),
    )
    return {"outcome": outcome}
