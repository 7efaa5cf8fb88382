"""The graph's node functions. Each returns only the state keys it changes."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph.caps import PlanningError, StatedLimits
from graph.checks import follow_up as carry
from graph.checks.choice import choose
from graph.checks.decided import decided_in_code
from graph.checks.edits import HOW_TO_ANSWER, PlanEditError, checked_plan, edit_of, is_approval
from graph.checks.fallback import fallback_plan
from graph.checks.intent import shopping_reason
from graph.checks.limits import limit_warnings, reconcile_limits
from graph.checks.named import with_named_product as named
from graph.checks.occasion import pick_mode
from graph.checks.picks import (
    missing_items,
    missing_limit_warning,
    one_pick_per_search,
)
from graph.checks.pool import choice_pool
from graph.checks.previous import parent_in_graph
from graph.checks.stated import checked_request, request_facts
from graph.checks.tidy import merge_reasoning_runs
from graph.checks.words import product_words
from graph.context import Context
from graph.cost import estimate_plan_cost
from graph.messages import masked_reply, raw_text_of, short_error, usage_of
from graph.previous_run import FollowUp
from graph.prompts import (
    PLANNING_RETRY,
    executor_tool_messages,
    planner_messages,
    reasoning_messages,
)
from graph.providers.models import chat_model_for, plain_chat_model
from graph.providers.registry import structured_output_method
from graph.providers.retry import is_streaming_refused
from graph.providers.secrets import redact_tree
from graph.state import (
    MAX_PLAN_STEPS,
    Outcome,
    Plan,
    ProductSummary,
    ReasoningAnswer,
    SearchDispatch,
    State,
    StepResult,
    Usage,
)
from graph.tools import catalog_for, search_products

NOT_SHOPPING_NOTE = (
    "this is not a shopping request: nothing was searched and nothing is recommended",
)


def planner(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Turn the request into a Plan with structured output. No tools are bound here.

    The model's plan is then reconciled in code with the limits the request states
    (graph/checks/stated.py, graph/checks/limits.py). If the model gives no usable plan
    twice, a plan is built in code from the request (graph/checks/fallback.py); it still
    goes through approval. The cleaned request and its stated limits are written into
    state for the later nodes."""
    # The one reading of the request's limits in a run; before any call, an impossible
    # limit is refused (no plan can meet it, and no search should try).
    request, stated = checked_request(state.request)
    # A follow-up: its finished parent read back, and what carries over (in code).
    previous = parent_in_graph(state.follow_up_of) if state.follow_up_of else None
    follow_up, stated = carry.carry_over(request, stated, previous) if previous else (None, stated)
    context = runtime.context
    method = structured_output_method(context.provider)
    model = chat_model_for(context).with_structured_output(Plan, method=method, include_raw=True)
    messages = planner_messages(request, previous)
    started = time.perf_counter()
    usage = Usage()
    for attempt in (1, 2):
        try:
            result = model.invoke(messages)
        except Exception as error:
            if not is_streaming_refused(error):
                raise
            # The server cannot stream the plan as it is written: ask it plainly instead.
            plain = plain_chat_model(context)
            model = plain.with_structured_output(Plan, method=method, include_raw=True)
            result = model.invoke(messages)
        raw = result.get("raw")
        usage = usage + usage_of(raw)
        plan = result.get("parsed")
        error = result.get("parsing_error") or "the model returned no plan"
        if isinstance(plan, Plan) and plan.not_shopping:
            # The model's "nothing to buy" stands only if code finds nothing to buy either.
            reason = shopping_reason(request, stated, plan.goal, catalog_for(context))
            if reason is not None:
                plan, error = None, reason
        if isinstance(plan, Plan):
            # A key the model echoed (from a prompt, a proxy) is masked before it is
            # stored in the checkpoint or shown.
            plan = Plan.model_validate(redact_tree(plan.model_dump()))
            return _planned(request, stated, plan, usage, started, follow_up)
        if attempt == 2:
            if f"at most {MAX_PLAN_STEPS} steps" in str(error):
                raise PlanningError(
                    f"the request needs more than {MAX_PLAN_STEPS} plan steps (the limit); "
                    "ask for fewer items at once, or group them",
                    raw_text_of(raw),
                )
            why = f"the planner returned no valid plan twice ({short_error(error)})"
            if not product_words(request):
                raise PlanningError(
                    f"{why}, and the request names no product to search for; say what you "
                    "want to buy",
                    raw_text_of(raw),
                )
            # The error quotes the model's output, which may echo a key: masked.
            plan = fallback_plan(request, stated, redact_tree(why))
            return _planned(request, stated, plan, usage, started, follow_up)
        # One retry with the validation error shown: it fixes most numbering slips of
        # small models. This is not replanning: no step has run yet.
        messages = [
            *messages,
            HumanMessage(PLANNING_RETRY.format(error=short_error(error))),
        ]
    raise AssertionError("unreachable")


def _planned(
    request: str,
    stated: StatedLimits,
    plan: Plan,
    usage: Usage,
    started: float,
    follow_up: FollowUp | None = None,
) -> dict[str, Any]:
    """The plan as it will be shown and run: a follow-up's fixed (follow_up_plan), or the
    product the request names kept whole in its queries (checks/named.py); limits
    reconciled with the request, reasoning steps that read the same results merged."""
    # A follow-up names what changes ("a cheaper grinder"), not the product anew.
    plan, fixed = carry.follow_up_plan(plan, follow_up) if follow_up else named(request, plan)
    reconciled = reconcile_limits(request, stated, plan)
    tidied, merged = merge_reasoning_runs(reconciled.plan)
    tidied = tidied.model_copy(update={"pick": pick_mode(request, tidied)})
    return {
        "clean_request": request,
        "stated_limits": stated,
        "follow_up": follow_up,
        "plan": tidied,
        "planner_usage": usage,
        "planner_latency_s": round(time.perf_counter() - started, 3),
        "plan_warnings": fixed + reconciled.notes + merged + limit_warnings(stated, tidied),
    }


def approval(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause with the plan and its cost estimate until a person approves, rejects or
    edits it. An edit is checked like the model's plan (Plan schema, limit_warnings); one
    that fails is refused with its reason kept in state, and the run pauses here again."""
    if runtime.context.auto_approve:
        return {"approval": "approved"}
    assert state.plan is not None
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
    if state.edit_error:
        payload["error"] = state.edit_error
    decision = interrupt(payload)
    cleared: dict[str, Any] = {"edit_error": None} if state.edit_error else {}
    if not is_approval(decision):
        return {"approval": "rejected", **cleared}
    edited = decision.get("plan") if isinstance(decision, dict) else None
    if isinstance(edited, dict) and "pick" not in edited:
        # An edit sent over the API before `pick` existed keeps the plan's choice of it.
        edited = {**edited, "pick": state.plan.pick}
    if edited is None:
        return {"approval": "approved", **cleared}
    try:
        plan = checked_plan(edited)
    except PlanEditError as error:
        # No approval is written: the routing brings the run back here, never to the
        # planner, and the next answer can fix the edit.
        return {"edit_error": f"the edited plan was refused: {error}"}
    _, stated = request_facts(vars(state))
    edit = edit_of(stated, state.plan, plan)
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
            message = AIMessage(content="", tool_calls=[call])
        else:
            model = plain_chat_model(context).bind_tools(
                [search_products], tool_choice=search_products.name
            )
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
    catalog = catalog_for(context)
    pool = choice_pool(state, earlier, catalog)
    candidates = pool.all_candidates  # what the model is shown; verify chooses from the pool
    decision = decided_in_code(pool.plan, step, pool.candidates) if context.code_decisions else None
    if decision is not None:
        # The checks alone determine the picks (graph/checks/decided.py): no model call.
        return _finish_step(
            StepResult(
                step=step.step,
                kind="reasoning",
                action=step.action,
                answer=decision.why,
                products=[c.summary for c in decision.picks],
                decided_in_code=True,
                latency_s=time.perf_counter() - started,
            ),
            state,
        )
    model = plain_chat_model(context).with_structured_output(
        ReasoningAnswer, method=structured_output_method(context.provider), include_raw=True
    )
    reply = model.invoke(reasoning_messages(state.run_plan, step, earlier, candidates))
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
        result.error = f"the model gave no usable answer: {why}"
        result.answer = raw_text_of(reply.get("raw"))[:300]
    else:
        known = {p.id: p for r in earlier for p in r.products}
        picked = list(dict.fromkeys(parsed.product_ids))
        unknown = [i for i in picked if i not in known]
        if unknown:
            result.warnings.append(f"ignored ids not among earlier results: {', '.join(unknown)}")
        picked = [i for i in picked if i in known]
        picked, note = one_pick_per_search(picked, candidates)
        if note:
            result.warnings.append(note)
        result.answer = parsed.answer
        result.products = [known[i] for i in picked]
    result.latency_s = time.perf_counter() - started
    return _finish_step(result, state)


def _finish_step(result: StepResult, state: State) -> dict[str, Any]:
    # One result per step, so the count of results is the index of the next step. Model
    # text in it (answer, raw output, errors) is stored and shown with secrets masked.
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
    return _finish_step(result, state)


def verify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Choose and check the recommendation in code: one product per item within every
    limit and the budget when the pools allow it (graph/checks/choice.py), prices from the
    catalog, the total compared with the budget, and what is missing or over named."""
    assert state.run_plan is not None
    if state.run_plan.not_shopping:
        # Nothing was searched: say so, and recommend nothing.
        return {"outcome": Outcome(not_shopping=True, warnings=list(NOT_SHOPPING_NOTE))}
    results = list(state.step_results)
    catalog = catalog_for(runtime.context)
    # The last reasoning step's picks are the model's; code chooses the recommendation
    # over every search's pool (graph/checks/choice.py), keeping them where none covers
    # the request better. With no reasoning step, code chooses alone. Still no LLM call.
    said = next((r for r in reversed(results) if r.kind == "reasoning" and r.products), None)
    model_ids = [p.id for p in said.products] if said else []
    _, stated = request_facts(vars(state))
    pool = choice_pool(state, results, catalog)
    candidates, found = pool.all_candidates, pool.found
    outcome = Outcome(budget=state.run_plan.budget)
    outcome.warnings += [
        f"{i} matches none of the request's words; it is not recommended"
        for i in dict.fromkeys(model_ids)
        if i in pool.unrelated
    ]
    choice = choose(pool.plan, pool.candidates, model_ids)
    # Each pick as the catalog has it now (price and title from the record, not a step).
    picked = [ProductSummary.of(found[c.summary.id]) for c in choice.picks]
    merged = carry.with_kept(picked, choice.reasons, state.follow_up, catalog)
    outcome.picks, outcome.reasons, gone = merged
    # Each pick's item, passed on so a follow-up knows what "a cheaper grinder" refers to.
    kept = {p.id: p.item for p in state.follow_up.kept} if state.follow_up else {}
    outcome.items = {p.id: kept.get(p.id) or choice.items.get(p.id, "") for p in outcome.picks}
    outcome.warnings += gone
    outcome.unknown_ids = [i for i in dict.fromkeys(model_ids) if i not in found]
    if missing_limit_warning(stated, state.run_plan):
        # The plan's budget is not what the shopper asked for: say so, never "within budget".
        outcome.dropped_limit = stated.budget
    # A limit in another currency was never applied: the total is not compared with it.
    outcome.unapplied_limits = [f"{f.shown} ({f.currency})" for f in stated.foreign]
    outcome.total_price = round(sum(p.price for p in outcome.picks), 2)
    outcome.missing = missing_items(state.run_plan, results, outcome.picks, candidates)
    if outcome.unknown_ids:
        outcome.warnings.append(f"not in the catalog: {', '.join(outcome.unknown_ids)}")
    if not outcome.picks:
        outcome.warnings.append("no product could be recommended")
    if outcome.dropped_limit is not None:
        # within_budget stays None: the plan's budget is not one the shopper set.
        if outcome.total_price > outcome.dropped_limit:
            outcome.warnings.append(
                f"total ${outcome.total_price:,.2f} is over the ${outcome.dropped_limit:,.2f} "
                "limit the request states"
            )
    elif outcome.budget is not None:
        if outcome.total_price > outcome.budget:
            outcome.within_budget = False
            outcome.warnings.append(
                f"total ${outcome.total_price:,.2f} is over the budget of ${outcome.budget:,.2f}"
            )
        elif outcome.picks and not outcome.missing:
            # Only a whole recommendation is "within budget": a part of one, or none, is not.
            outcome.within_budget = True
    if outcome.picks and not choice.fits:
        outcome.warnings.extend(choice.notes)  # nothing fits: how far the cheapest is over
    outcome.warnings.extend(item.describe() for item in outcome.missing)
    outcome.warnings.extend(f"plan: {warning}" for warning in state.run_plan_warnings)
    for result in results:
        if result.error:
            outcome.warnings.append(f"step {result.step} failed: {result.error}")
        elif result.kind == "search" and not result.products:
            outcome.warnings.append(f"step {result.step} found no products")
    return {"outcome": outcome}
