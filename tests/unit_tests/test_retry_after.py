"""A 429's Retry-After is honoured up to RETRY_AFTER_CAP_S; asked for longer, the run
gives up at once and names the figure. Real CLI processes against the fake server."""

from __future__ import annotations

import time
from email.utils import formatdate
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import photo_gift_script

from graph.providers.retry import RETRY_AFTER_CAP_S


def run_with(fault: str, catalog: Path, data_dir: Path) -> tuple[object, FakeScript, float]:
    fake = photo_gift_script(faults=[fault])
    with fake_openai_server(fake) as url:
        started = time.monotonic()
        run = graph_run_process(
            url,
            data_dir,
            "a strap gift under $200",
            "--yes",
            "--catalog",
            str(catalog),
            COLUMNS="400",
        )
        elapsed = time.monotonic() - started
    return run, fake, elapsed


@pytest.mark.parametrize("value", ["3", "2.5", "http-date"])
def test_retry_after_under_the_cap_is_waited_for(
    value: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    not_before = None
    if value == "http-date":
        # An absolute time, whole seconds: retrying before it would ignore the server.
        not_before = time.time() + 8
        value = formatdate(not_before, usegmt=True)
    run, fake, _ = run_with(f"429:{value}", small_catalog_file, isolated_data_dir)
    assert run.returncode == 0, run.stdout + run.stderr  # type: ignore[attr-defined]
    if not_before is not None:
        retried_at = fake.arrivals[1] + (time.time() - time.monotonic())
        assert retried_at >= not_before - 1.0, not_before - retried_at
        return
    gap = fake.arrivals[1] - fake.arrivals[0]
    # The server's wait, then the policy's own 1 s backoff (before: 1 s in all).
    assert gap >= 2.5 + 1.0 - 0.1, gap


@pytest.mark.parametrize("seconds", [30, 3600])
def test_retry_after_over_the_cap_gives_up_at_once_naming_the_figure(
    seconds: int, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    run, fake, elapsed = run_with(f"429:{seconds}", small_catalog_file, isolated_data_dir)
    output = run.stdout + run.stderr  # type: ignore[attr-defined]
    assert run.returncode == 1, output  # type: ignore[attr-defined]
    assert len(fake.requests) == 1  # not retried
    assert elapsed < 15, elapsed  # no backoff slept (process start-up included)
    assert f"asked to wait {seconds:,} s" in output
    assert f"more than the {RETRY_AFTER_CAP_S:.0f} s" in output and "gave up at once" in output
