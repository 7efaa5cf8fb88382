"""Token counting for the cost estimate never needs the network.

tiktoken downloads an encoding the first time a model asks for it. The suite runs with an
empty tiktoken cache and downloads refused (the `offline_tokenizer` fixture in
conftest.py), so every machine counts the same way. These tests block sockets to show
that no test reaches the network for a tokenizer, and that an offline machine, where
tiktoken's download fails, gets the documented fallback of 1 token per 4 characters.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
import tiktoken
import tiktoken.load
from conftest import refuse_tokenizer_download

from graph.context import Context
from graph.cost import estimate_plan_cost, token_counter
from graph.schemas import Plan

# tiktoken's own reader, taken at collection, before the session fixture replaces it.
DOWNLOADING_READ_FILE = tiktoken.load.read_file
FALLBACK = "approximation: 1 token per 4 characters"
# A model tiktoken knows, so it would look for (and download) o200k_base.
KNOWN_MODEL = "gpt-4o-mini"
PLAN = Plan.model_validate(
    {
        "goal": "A camera strap under $50.",
        "budget": 50,
        "steps": [
            {"step": 1, "action": "Find camera straps", "query": "camera strap"},
            {"step": 2, "action": "Pick one strap", "query": None},
        ],
    }
)


@pytest.fixture
def network_attempts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every name lookup or outgoing connection, recorded and refused."""
    attempts: list[Any] = []

    def refuse_lookup(*args: Any, **kwargs: Any) -> Any:
        attempts.append(("getaddrinfo", args[:2]))
        raise socket.gaierror("network blocked in this test")

    def refuse_connect(self: socket.socket, address: Any) -> None:
        attempts.append(("connect", address))
        raise ConnectionRefusedError("network blocked in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse_lookup)
    monkeypatch.setattr(socket.socket, "connect", refuse_connect)
    token_counter.cache_clear()
    yield attempts
    token_counter.cache_clear()


def test_the_suite_counts_with_the_fallback_and_never_reaches_the_network(
    network_attempts: list[Any],
) -> None:
    count, tokenizer = token_counter(KNOWN_MODEL)
    assert tokenizer == FALLBACK
    assert count("abcdefgh") == 2
    estimate = estimate_plan_cost(PLAN, Context(provider="openai", model=KNOWN_MODEL))
    assert estimate.tokenizer == FALLBACK
    assert estimate.input_tokens > 0 and estimate.usd > 0
    assert network_attempts == []


def test_an_offline_machine_falls_back_when_the_download_fails(
    network_attempts: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiktoken's own download code, as on a user's machine, with sockets blocked: the
    # attempt is made and refused, and the estimate still comes out.
    assert DOWNLOADING_READ_FILE is not refuse_tokenizer_download
    monkeypatch.setattr(tiktoken.load, "read_file", DOWNLOADING_READ_FILE)
    count, tokenizer = token_counter(KNOWN_MODEL)
    assert tokenizer == FALLBACK
    assert count("x" * 40) == 10
    assert network_attempts, "tiktoken did not even try to fetch its encoding"


def test_a_loadable_encoding_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake byte-level encoding (one token per UTF-8 byte), named as such: it shows the
    # tiktoken branch counts with the encoding, without any encoding file.
    fake = tiktoken.Encoding(
        name="fake-bytes",
        pat_str=r"[\s\S]+",
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={},
    )
    monkeypatch.setattr(tiktoken, "encoding_for_model", lambda model: fake)
    token_counter.cache_clear()
    try:
        count, tokenizer = token_counter(KNOWN_MODEL)
    finally:
        token_counter.cache_clear()
    assert tokenizer == "tiktoken fake-bytes"
    assert count("héllo") == 6
