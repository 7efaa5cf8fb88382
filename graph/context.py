"""Per-run configuration (LangGraph `context_schema`); Studio shows these fields as a form.

Environment variables act as fallbacks, so `.env` configures the CLI and Studio alike.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pydantic.json_schema import SkipJsonSchema

from catalog.paths import catalog_url_from_env

ToolMode = Literal["direct", "llm"]


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or default


@dataclass(kw_only=True)
class Context:
    provider: str | None = field(
        default=None,
        metadata={
            "description": "LLM provider: openai, azure, compatible or local. "
            "Empty means: pick from the environment (SHOPPING_PROVIDER)."
        },
    )
    model: str | None = field(
        default=None,
        metadata={"description": "Model or deployment name; empty means the provider default."},
    )
    tool_mode: ToolMode = field(
        default="direct",
        metadata={
            "description": "direct: search steps call search_products with the plan's own "
            "query and filters (no LLM call). llm: the executor LLM chooses the arguments."
        },
    )
    catalog: str | None = field(
        default=None,
        metadata={
            "description": "Catalog file or index directory; empty means the shipped default."
        },
    )
    search_limit: int = field(
        default=5, metadata={"description": "Products returned per search step (1-50)."}
    )
    max_output_tokens: int = field(
        default=512, metadata={"description": "Upper bound on tokens generated per LLM call."}
    )
    auto_approve: bool = field(
        default=False,
        metadata={"description": "Run the plan without pausing for approval."},
    )
    # A ready chat model (tests pass a fake one; the CLI passes the started local model).
    # SkipJsonSchema keeps it out of the JSON schema, so Studio's form does not show it and
    # the server drops a `chat_model` key sent in a run's context (it keeps only schema keys).
    chat_model: SkipJsonSchema[Any] = field(default=None, repr=False)
    # The PostgreSQL catalog ($CATALOG_URL, read once here and passed to the tools). Out of
    # the schema like chat_model, so a run's context cannot point the server at another
    # database; repr=False keeps the password out of logs and tracebacks.
    catalog_url: SkipJsonSchema[str | None] = field(default=None, repr=False)
    # The run's opened catalog (a CatalogBackend; graph/tools.py: catalog_for): a test
    # passes one as it passes a chat model, and a session opens the named one once per
    # run. Out of the schema like chat_model.
    catalog_backend: SkipJsonSchema[Any] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.provider = self.provider or _env("SHOPPING_PROVIDER")
        self.model = self.model or _env("SHOPPING_MODEL")
        self.catalog = self.catalog or _env("SHOPPING_CATALOG")
        self.catalog_url = self.catalog_url or catalog_url_from_env()
        if self.tool_mode not in ("direct", "llm"):
            raise ValueError(f"tool_mode must be 'direct' or 'llm', got {self.tool_mode!r}")
        if not 1 <= self.search_limit <= 50:
            raise ValueError(
                f"search_limit (--limit) must be between 1 and 50, got {self.search_limit}"
            )

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]
