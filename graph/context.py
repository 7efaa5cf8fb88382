"""Per-run configuration (LangGraph `context_schema`); Studio shows these fields as a form.

Environment variables act as fallbacks, so `.env` configures the CLI and Studio alike.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from dotenv import dotenv_values
from langchain_core.runnables import RunnableConfig
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from catalog.exits import EXIT_BAD_INPUT
from catalog.paths import SECRET_NAME, catalog_url_from_env, env

ToolMode = Literal["direct", "llm"]
# The providers of graph/providers/registry.py (which checks that its table has exactly
# these), as a type, so Studio's form offers them as a choice.
ProviderName = Literal["openai", "azure", "compatible", "local"]
# Products a search shows: the catalog keeps up to 50 per search to choose from.
MIN_SEARCH_LIMIT, MAX_SEARCH_LIMIT = 1, 50

ENV_FILE = ".env"
ENV_FILE_MAX_BYTES = 1 << 20
# A base URL and the key that may be sent to it: a key is sent only to the URL it was
# configured beside, never to one that a .env adds to a key from the environment.
KEY_OF_URL = {"OPENAI_BASE_URL": "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT": "AZURE_OPENAI_API_KEY"}
# Variables naming where to connect (OPENAI_BASE_URL, CATALOG_URL, PGHOST, HTTPS_PROXY).
ENDPOINT_NAME = re.compile(r"(URL|ENDPOINT|HOST|HOSTADDR|PROXY)$", re.I)


# Who started a run: the CLI (and the benches, through the same session calls), the eval
# harness, or the API server (Studio included).
FrontEnd = Literal["cli", "eval", "api"]


def traced_as(front_end: FrontEnd) -> RunnableConfig:
    """A run's tags and name as a trace shows them (LangSmith, with LANGSMITH_TRACING=true;
    docs/scripting.md): which front end ran it."""
    return {"tags": ["shopping-planner", front_end], "run_name": f"shopping-planner ({front_end})"}


class SettingsError(RuntimeError):
    """The settings file cannot be used; the message names it and says why."""

    exit_code = EXIT_BAD_INPUT  # the code a CLI ends with (catalog.exits)


def load_env_file(directory: Path | None = None) -> Path | None:
    """Read `.env` from `directory` (default: the working directory), and no other place:
    a file above it may belong to anyone (a parent under /tmp), so it is never searched
    for. Variables already set win. Returns the file read, or None if there is none or
    it is not read (another user owns it, or anyone may write to it: a warning says so).
    A file that sets where to connect while the environment sets a credential (which may
    be sent there) is named in a warning.

    SettingsError for a file that is not a regular file (a FIFO would block for good), is
    not UTF-8 text, holds a NUL, or sets a base URL while its key comes from the
    environment (that key, which wins, would go to the file's URL)."""
    path = (directory or Path.cwd()) / ENV_FILE
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SettingsError(f"cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise SettingsError(f"{path} is not a regular file; settings are read from a file")
    try:
        # O_NONBLOCK: if the file was swapped for a FIFO since the check, do not wait on it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)  # of the file opened, not of one swapped in since
            data = handle.read(ENV_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise SettingsError(f"cannot read {path}: {error.strerror}") from None
    # Anyone could have put it there: settings, and the hosts credentials go to, are read
    # only from a file of the user's own that no one else may change.
    if info.st_uid != os.getuid() or info.st_mode & stat.S_IWOTH:
        why = "another user owns it" if info.st_uid != os.getuid() else "anyone may write to it"
        sys.stderr.write(f"warning: {path} is not read: {why}\n")
        return None
    if len(data) > ENV_FILE_MAX_BYTES:
        raise SettingsError(f"{path} is over {ENV_FILE_MAX_BYTES} bytes; is it a settings file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SettingsError(
            f"{path} is not UTF-8 text (byte {data[error.start]:#04x} at offset {error.start}); "
            "save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise SettingsError(f"{path} holds a NUL byte at offset {text.index(chr(0))}")
    values = {k: v for k, v in dotenv_values(stream=io.StringIO(text)).items() if v is not None}
    for url_name, key_name in KEY_OF_URL.items():
        # A key in the environment wins over one the file sets beside its URL.
        if values.get(url_name, "").strip() and not env(url_name) and env(key_name):
            raise SettingsError(
                f"{path} sets {url_name}, but {key_name} comes from the environment: a key "
                f"is sent only to the base URL configured with it (set both in one place)"
            )
    added = {name: value for name, value in values.items() if name not in os.environ}
    os.environ.update(added)
    hosts = [name for name, value in added.items() if ENDPOINT_NAME.search(name) and value.strip()]
    # Only a credential of the environment's, not one the file sets beside its own host.
    credentials = sorted(
        n for n in os.environ if n not in added and re.fullmatch(SECRET_NAME, n, re.I) and env(n)
    )
    if hosts and credentials:
        sys.stderr.write(
            f"warning: {path} sets {', '.join(hosts)}, and {', '.join(credentials)} may be "
            "sent there: make sure the file is yours\n"
        )
    return path


CODE_DECISIONS_SETTING = "SHOPPING_CODE_DECISIONS"


def _on_or_off(name: str, *, default: bool) -> bool:
    value = (env(name) or ("on" if default else "off")).lower()
    if value not in ("on", "off"):
        raise SettingsError(f"{name} must be on or off, got {value!r}")
    return value == "on"


@dataclass(kw_only=True)
class Context:
    provider: ProviderName | None = field(
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
    # The bounds in the annotation are the form's (Studio refuses 500 before a run
    # starts); __post_init__ checks the same bounds for every other caller.
    search_limit: Annotated[int, Field(ge=MIN_SEARCH_LIMIT, le=MAX_SEARCH_LIMIT)] = field(
        default=5, metadata={"description": "Products returned per search step (1-50)."}
    )
    max_output_tokens: Annotated[int, Field(ge=1)] = field(
        default=512, metadata={"description": "Upper bound on tokens generated per LLM call."}
    )
    code_decisions: bool | None = field(
        default=None,
        metadata={
            "description": "Answer a pick step in code, with no LLM call, when the checks "
            "alone determine it (graph/choosing/decided.py). Empty means: "
            "SHOPPING_CODE_DECISIONS (on or off), on when unset."
        },
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
        # Any name is kept: resolve_provider refuses one the registry lacks, naming the
        # choices, for the setting and the environment alike.
        self.provider = self.provider or cast("ProviderName | None", env("SHOPPING_PROVIDER"))
        self.model = self.model or env("SHOPPING_MODEL")
        self.catalog = self.catalog or env("SHOPPING_CATALOG")
        self.catalog_url = self.catalog_url or catalog_url_from_env()
        if self.code_decisions is None:
            self.code_decisions = _on_or_off(CODE_DECISIONS_SETTING, default=True)
        # SettingsError naming the field: a run's context sent over the API is built here,
        # and a bare ValueError (or TypeError for "ten") said nothing of where it came from.
        if self.tool_mode not in ("direct", "llm"):
            raise SettingsError(f"tool_mode must be 'direct' or 'llm', got {self.tool_mode!r}")
        _whole("search_limit (--limit)", self.search_limit, MIN_SEARCH_LIMIT, MAX_SEARCH_LIMIT)
        _whole("max_output_tokens", self.max_output_tokens, 1)


def _whole(name: str, value: Any, low: int, high: int | None = None) -> None:
    """A whole-number setting within the bounds its form shows, else SettingsError."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if whole and low <= value and (high is None or value <= high):
        return
    span = f"between {low} and {high}" if high is not None else f"at least {low}"
    raise SettingsError(f"{name} must be a whole number {span}, got {value!r}")
