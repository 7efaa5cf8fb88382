"""What running a plan produces: step results, usage, and the checked outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.schemas.model_text import MAX_PICKED_IDS, capped

if TYPE_CHECKING:
    from catalog import Product


class ProductSummary(BaseModel):
    """The compact view of a product that steps pass on (never the raw tool payload)."""

    id: str
    title: str
    price: float
    rating: float | None = None
    category: str | None = None

    @classmethod
    def of(cls, product: Product) -> ProductSummary:
        """The one way a catalog record becomes a summary (search results, checked picks):
        the summary's fields, each the product's own."""
        return cls(**{name: getattr(product, name) for name in cls.model_fields})


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    unknown_calls: int = 0  # calls whose server sent no sane counts: unknown, not zero

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            **{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields}
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class SearchDispatch(BaseModel):
    """A search step handed to the tool node, until record_search records its answer."""

    step: int
    started_at: float  # time.time(): the answer may be recorded in another process
    llm_calls: int = 0  # 1 when the executor LLM chose the search arguments
    usage: Usage = Usage()


class StepResult(BaseModel):
    """What one executed step produced."""

    step: int
    kind: Literal["search", "reasoning"]
    action: str
    products: list[ProductSummary] = []  # a search's shown matches; a reasoning step's picks
    # A search's further matches, best first (tools.POOL_DEPTH in all): never shown to a
    # model; code chooses among them too (graph/choosing/choice.py).
    pool: list[ProductSummary] = []
    answer: str = ""
    warnings: list[str] = []
    error: str | None = None
    decided_in_code: bool = False  # a pick step code answered (graph/choosing/decided.py)
    llm_calls: int = 0
    usage: Usage = Usage()
    latency_s: float = 0.0


class MissingItem(BaseModel):
    """An item the plan searched for that the recommendation lacks, and why; step 0 (and
    the request's words for it as `query`) for an item the request lists that the plan
    never searched for."""

    step: int
    query: str
    reason: str

    def describe(self) -> str:
        where = f" (step {self.step})" if self.step else ""
        return f"missing: {self.query!r}{where}: {self.reason}"


class Outcome(BaseModel):
    """The recommendation checked in code after the last step (no LLM involved)."""

    picks: list[ProductSummary] = []
    reasons: dict[str, str] = {}  # per pick id: why, from catalog figures (choosing/choice.py)
    items: dict[str, str] = {}  # per pick id: the item it is the pick for (its search queries)
    # Every item the plan searched for is in `picks` or here: none disappears unnamed.
    missing: list[MissingItem] = []
    total_price: float = 0.0
    budget: float | None = None
    within_budget: bool | None = None
    # A price limit the request states but the plan dropped (plan_warnings says so);
    # within_budget then compares against a budget the shopper never set.
    dropped_limit: float | None = None
    # Limits the request states in another currency than the catalog's, as stated: never
    # applied or converted, so the total is not compared with them.
    unapplied_limits: list[str] = []
    unknown_ids: list[str] = []
    warnings: list[str] = []
    # The request asks for no product (the planner said so): nothing ran.
    not_shopping: bool = False


class ReasoningAnswer(BaseModel):
    """Structured output of a reasoning step."""

    model_config = ConfigDict(extra="forbid")

    answer: Annotated[str, capped("answer")] = Field(description="One short sentence.")
    product_ids: Annotated[list[str], capped("product_ids", MAX_PICKED_IDS, "product_id")] = Field(
        description="Ids picked, from the data shown; [] if none."
    )
