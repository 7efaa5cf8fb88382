"""A follow-up's view of the finished run it follows (issue 26): the earlier request, its
plan and recommendation in brief, and what carries over into the new run.

A follow-up is a new thread linked to its parent by id (docs/follow-ups.md): the
planner writes a `FollowUp` into the new run's state, so the new run reads back whole
without its parent, and the parent's checkpoints are never written again.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from graph.schemas.limits import StatedLimits
from graph.schemas.model_text import blank_is_none, capped, model_facing_schema

# Checkpoint metadata key (and input field): the thread a follow-up follows.
FOLLOW_UP_OF = "follow_up_of"

# What a follow-up asks of the previous run, as the planner states it and code checks it
# (graph/shaping/follow_up.py): "cheaper" / "dearer" the same item below / above its
# earlier pick's price, "add" another item beside the earlier picks, "replace" an earlier
# pick with another product, "refine" the same item anew (a feature, an option, a limit),
# "new" a request unrelated to the previous run (nothing carries over).
FollowUpKind = Literal["cheaper", "dearer", "add", "replace", "refine", "new"]
FOLLOW_UP_KINDS: tuple[FollowUpKind, ...] = get_args(FollowUpKind)


class FollowUpStatement(BaseModel):
    """The planner's reading of a follow-up (the rules are in its prompt): its kind,
    the earlier search it changes, and what it asks for. Code checks it against the
    previous run before anything carries over."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=model_facing_schema)

    # Written in this order: what it is about and what it asks for, then its kind.
    item: Annotated[str | None, capped("query"), AfterValidator(blank_is_none)] = None
    wants: Annotated[str | None, capped("query"), AfterValidator(blank_is_none)] = None
    kind: FollowUpKind


class PreviousPick(BaseModel):
    """One product the previous run recommended, and the item (its search query) it
    was the pick for."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    price: float
    item: str = ""
    category: str | None = None  # its catalog category: where the same item is looked for


class PreviousRun(BaseModel):
    """The finished run a follow-up follows, as the planner sees it (a few hundred
    tokens at most, fenced as data in its prompt) and as code carries it over."""

    model_config = ConfigDict(frozen=True)

    thread_id: str
    request: str
    goal: str = ""
    queries: tuple[str, ...] = ()
    # The catalog categories its searches were held to: where a chain's item is looked
    # for once a link found nothing (no pick to take the category from).
    categories: tuple[str, ...] = ()
    picks: tuple[PreviousPick, ...] = ()
    budget: float | None = None
    # The limits it held to (its request's, with any it carried over itself): a follow-up
    # keeps those it does not state anew. Never shown to the model.
    limits: StatedLimits = Field(default_factory=StatedLimits)


class FollowUp(BaseModel):
    """What a follow-up carries over, worked out in code by the planner node: the kind
    of follow-up, the earlier picks kept in the recommendation (counted in its total
    against the budget), those it replaces, and each carry-over in words, shown at
    approval as coming from the previous run."""

    model_config = ConfigDict(frozen=True)

    previous: PreviousRun
    kind: FollowUpKind
    # The kind the planner stated (None: it gave no usable reading), where code ran
    # another: the outcome says so, and the eval counts which of the two was right.
    planner_kind: FollowUpKind | None = None
    kept: tuple[PreviousPick, ...] = ()
    replaced: tuple[PreviousPick, ...] = ()
    added: str = ""  # an "add" or "replace" follow-up's words for the new item ("sleeping bag")
    wants: str = ""  # what a refinement, "cheaper" or "dearer" asks for anew ("manual")
    notes: tuple[str, ...] = ()

    @property
    def kept_total(self) -> float:
        return round(sum(p.price for p in self.kept), 2)
