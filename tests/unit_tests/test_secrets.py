"""Keys stay secret: .env is ignored, .env.example documents every variable the code
reads, and no error path (CLI output, PlanningError, RunFailed, checkpoints) shows a key."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from conftest import skip_or_fail_in_ci
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PLAN

from graph.cli.errors import error_text
from graph.cli.main import main
from graph.runs.session import RunFailed
from graph.schemas import PlanningError

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-SECRET-0123456789abcdefXYZ"
# Variables every OS sets; documenting them in .env.example would only confuse.
# Not user settings: the OS's own, and API_KEY, which localmodel/launcher.py sets in the
# model server's own environment from the key file (llama-cpp-python reads it there).
SYSTEM_VARIABLES = {"HOME", "XDG_DATA_HOME", "PATH", "API_KEY"}
ENV_READS = [
    r"os\.environ\.get\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']",
    r"os\.environ\[\s*[\"']([A-Z][A-Z0-9_]+)[\"']\s*\]",
    r"os\.getenv\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']",
    r"\b_?env\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']",
    # Names kept in constants, e.g. DATA_DIR_ENV = "SHOPPING_PLANNER_DATA_DIR", or
    # FAST_PATHS_SETTING = "LOCAL_MODEL_FAST_PATHS" (read through localmodel.settings).
    r"\b[A-Z_]*ENV[A-Z_]*\s*=\s*[\"']([A-Z][A-Z0-9_]+)[\"']",
    r"\b[A-Z_]*_SETTING\s*=\s*[\"']([A-Z][A-Z0-9_]+)[\"']",
]


def variables_read_by_the_code() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for package in ("graph", "catalog", "localmodel", "scripts"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for pattern in ENV_READS:
                for name in re.findall(pattern, text):
                    found.setdefault(name, []).append(str(path.relative_to(REPO_ROOT)))
    return found


def test_dot_env_is_git_ignored() -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        skip_or_fail_in_ci("not a git checkout, or git is not installed")
    check = subprocess.run(
        ["git", "check-ignore", "-q", ".env"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0, ".env is not git-ignored: keys could be committed"


def test_env_example_documents_every_variable_the_code_reads() -> None:
    found = variables_read_by_the_code()
    # The scan must see the variables we know about, or it proves nothing.
    assert {
        "OPENAI_API_KEY",
        "SHOPPING_LLM_TIMEOUT",
        "SHOPPING_CHECKPOINT_BUSY_TIMEOUT",
        "LOCAL_MODEL_FAST_PATHS",
    } <= set(found)
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, flags=re.MULTILINE))
    missing = {
        name: sorted(set(where))
        for name, where in found.items()
        if name not in documented and name not in SYSTEM_VARIABLES
    }
    assert not missing, f"read by the code but not in .env.example: {missing}"
    # And .env.example holds no real value for a key.
    for line in example.splitlines():
        if re.match(r"^[A-Z_]*(KEY|SECRET|TOKEN|PASSWORD)[A-Z_]*=", line):
            assert line.split("=", 1)[1].strip() == "", line


cli = partial(graph_run_process, stdin=None, timeout=90, OPENAI_API_KEY=KEY)


def test_http_500_every_time_real_cli_backs_off_fails_clearly_and_shows_no_key(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """The unpatched production RetryPolicy, end to end in a real process."""
    fake = FakeScript(replies={"Plan": [STRAP_PLAN]}, faults=["500"] * 3)
    with fake_openai_server(fake) as url:
        run = cli(
            url, isolated_data_dir, "a strap gift under $200", "--catalog", str(small_catalog_file)
        )
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert KEY not in output and "SECRET" not in output
    assert "Traceback" not in output
    errors = [line for line in run.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "HTTP 500" in errors[0] and "after 3 attempts" in errors[0]
    assert len(fake.requests) == 3
    gaps = [b - a for a, b in zip(fake.arrivals, fake.arrivals[1:], strict=False)]
    assert gaps[0] >= 0.9 and gaps[1] >= 1.9, gaps  # 1 s, then 2 s (plus jitter)


def test_http_401_echoing_the_key_is_not_retried_and_the_key_is_masked(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [STRAP_PLAN]}, faults=["401"])
    with fake_openai_server(fake) as url:
        run = cli(
            url, isolated_data_dir, "a strap gift under $200", "--catalog", str(small_catalog_file)
        )
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "HTTP 401" in output and "Incorrect API key provided: ***" in output
    assert KEY not in output and "SECRET" not in output
    assert "Traceback" not in output
    assert len(fake.requests) == 1  # auth errors are not retried


def test_planning_error_holding_the_key_is_printed_masked_and_not_checkpointed(
    small_catalog_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A model that parrots the key back in an invalid plan (twice: no valid plan).
    leaky = {"goal": f"my key is {KEY}", "budget": None, "steps": []}
    fake = FakeScript(replies={"Plan": [leaky, leaky]})
    db = tmp_path / "c.sqlite"
    with fake_openai_server(fake) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setattr(sys, "argv", ["graph.run"])
        # A request naming no product: no plan can be built in code either.
        code = main(["🎁 🎁", "--catalog", str(small_catalog_file), "-y", "--db", str(db)])
    out = capsys.readouterr()
    assert code == 1
    assert "no valid plan" in out.out and "model output:" in out.out
    assert KEY not in out.out + out.err and "***" in out.out
    for stored in db.parent.glob("c.sqlite*"):
        assert KEY.encode() not in stored.read_bytes(), stored.name


@pytest.mark.parametrize(
    "error",
    [
        PlanningError("the planner returned no valid plan", raw=f"key={KEY}"),
        RunFailed(f"Error code: 401 - Incorrect API key provided: {KEY}"),
        RuntimeError(f"Authorization: Bearer {KEY}"),
    ],
    ids=["PlanningError", "RunFailed", "other"],
)
def test_error_text_masks_the_configured_key(
    error: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    text = error_text(error)
    assert KEY not in text and "***" in text


def test_error_text_masks_key_shaped_strings_even_if_not_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-0123456789abcdef")
    assert "sk-proj-abcdefghijkl" not in error_text(RunFailed("sk-proj-abcdefghijkl1234"))
    assert "azure-0123456789abcdef" not in error_text(RunFailed("k=azure-0123456789abcdef"))
