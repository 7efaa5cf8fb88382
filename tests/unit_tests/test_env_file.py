"""Classes 3, 9 (bytes the settings do not expect) and 10 (a FIFO) of the second red-team
round (#24): `.env` is read from the working directory only, never from a directory above
it, and a key is sent only to the base URL it was configured with. Through the real CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import cli_environment
from conftest import FakeServer, skip_or_fail_in_ci

from catalog.paths import SECRET_NAME

KEY = "sk-redteam-0123456789abcdef0123456789"
PASSWORD = "pa55-w0rd-XYZ"


def run_in(cwd: Path, data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI run from `cwd`, its provider settings only those in `env` (and `cwd`/.env)."""
    base = cli_environment("", data_dir, **env)
    for name in ("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"):
        if name not in env:
            base.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "graph.run", *args],
        cwd=cwd,
        env=base,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


def test_the_working_directorys_env_is_read_and_named_under_debug(
    tmp_path: Path, small_catalog_file: Path, isolated_data_dir: Path, photo_gift_server: FakeServer
) -> None:
    (tmp_path / ".env").write_text(
        f"OPENAI_BASE_URL={photo_gift_server.url}\nOPENAI_MODEL=fake-model\n"
    )
    run = run_in(
        tmp_path, isolated_data_dir, "a strap gift", "--yes", "--debug",
        "--catalog", str(small_catalog_file),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"settings read from {tmp_path / '.env'}" in run.stderr
    assert photo_gift_server.script.calls_for("Plan")


def test_an_env_above_the_working_directory_is_never_read(
    tmp_path: Path, small_catalog_file: Path, isolated_data_dir: Path, photo_gift_server: FakeServer
) -> None:
    below = tmp_path / "checkout" / "sub"
    below.mkdir(parents=True)
    (tmp_path / ".env").write_text(
        f"OPENAI_BASE_URL={photo_gift_server.url}\nOPENAI_API_KEY={KEY}\n"
    )
    (tmp_path / "checkout" / ".env").write_text(f"OPENAI_BASE_URL={photo_gift_server.url}\n")
    # The OpenAI provider named, so a machine with the local extra does not fall back to
    # the embedded model (and succeed): with no key anywhere but above, the run must fail.
    run = run_in(
        below, isolated_data_dir, "a strap gift", "--yes", "--debug", SHOPPING_PROVIDER="openai"
    )
    assert run.returncode != 0
    assert not photo_gift_server.script.requests, (
        "a .env above the working directory redirected the run"
    )
    assert "no .env in" in run.stderr


def test_a_key_is_not_sent_to_a_base_url_set_without_it(
    tmp_path: Path, small_catalog_file: Path, isolated_data_dir: Path, photo_gift_server: FakeServer
) -> None:
    (tmp_path / ".env").write_text(
        f"OPENAI_BASE_URL={photo_gift_server.url}\nOPENAI_MODEL=fake-model\n"
    )
    run = run_in(
        tmp_path, isolated_data_dir, "a strap gift", "--yes",
        "--catalog", str(small_catalog_file), OPENAI_API_KEY=KEY,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert not photo_gift_server.script.requests, (
        "the key went to a base URL it was not configured with"
    )
    assert "OPENAI_BASE_URL" in output and "OPENAI_API_KEY" in output
    assert KEY not in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1, output


@pytest.mark.parametrize(
    "content",
    [b"OPENAI_MODEL=caf\xe9\n", b"OPENAI_MODEL=a\x00b\n", b"\xff\xfeO\x00=\x00"],
    ids=["latin-1", "nul", "utf-16"],
)
def test_an_env_with_unexpected_bytes_is_one_line(
    content: bytes, tmp_path: Path, isolated_data_dir: Path
) -> None:
    (tmp_path / ".env").write_bytes(content)
    run = run_in(tmp_path, isolated_data_dir, "--list")
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "Traceback" not in output and ".env" in output, output
    assert len(output.strip().splitlines()) == 1, output


def test_an_env_that_is_a_fifo_does_not_hang(tmp_path: Path, isolated_data_dir: Path) -> None:
    os.mkfifo(tmp_path / ".env")
    run = run_in(tmp_path, isolated_data_dir, "--list")  # a hang fails on the timeout
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "not a regular file" in output, output


@pytest.mark.parametrize("owner", ["another user", "anyone may write"])
def test_an_env_the_user_does_not_own_alone_is_not_read(
    owner: str, tmp_path: Path, isolated_data_dir: Path
) -> None:
    """#43: a .env another user owns, or anyone may write to, was read like one's own."""
    redirected = tmp_path / "redirected.sqlite"
    env_file = tmp_path / ".env"
    env_file.write_text(f"SHOPPING_CHECKPOINT_DB={redirected}\n")
    if owner == "another user":
        if os.geteuid() != 0:
            skip_or_fail_in_ci("giving a file to another user needs root")
        os.chown(env_file, 65534, 65534)
    else:
        env_file.chmod(0o666)
    run = run_in(tmp_path, isolated_data_dir, "--list")
    assert run.returncode == 0, run.stdout + run.stderr
    assert not redirected.exists(), "the .env was read"
    assert run.stderr.splitlines() == [
        f"warning: {env_file} is not read: "
        + ("another user owns it" if owner == "another user" else "anyone may write to it")
    ]


@pytest.mark.parametrize(
    ("settings", "environment"),
    [
        ("PGHOST=db.example.net\nPGPORT=5433\n", {"PGPASSWORD": PASSWORD}),
        ("CATALOG_URL=postgresql://shopper@db.example.net/shop\n", {"PGPASSWORD": PASSWORD}),
        ("HTTPS_PROXY=http://proxy.example.net:3128\n", {"OPENAI_API_KEY": PASSWORD}),
    ],
    ids=["pghost", "catalog-url", "proxy"],
)
def test_an_env_pointing_credentials_at_a_host_is_named_before_anything_is_sent(
    settings: str, environment: dict[str, str], tmp_path: Path, isolated_data_dir: Path
) -> None:
    """#43: PGPASSWORD and the key went to a host a .env in the working directory named,
    with no word about it."""
    (tmp_path / ".env").write_text(settings)
    run = run_in(tmp_path, isolated_data_dir, "--list", **environment)
    assert run.returncode == 0, run.stdout + run.stderr
    [warning] = run.stderr.splitlines()
    host = settings.split("=")[0]
    assert warning.startswith(f"warning: {tmp_path / '.env'} sets {host}, and "), warning
    assert next(iter(environment)) in warning
    assert PASSWORD not in warning


@pytest.mark.parametrize(
    ("settings", "environment"),
    [
        ("AZURE_OPENAI_ENDPOINT=https://ai.example.net\nAZURE_OPENAI_API_KEY=its-own\n", {}),
        ("PGHOST=db.example.net\nPGPASSWORD=its-own\n", {}),
        ("OPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_API_KEY=its-own\n", {}),
    ],
    ids=["azure-endpoint", "pghost", "base-url"],
)
def test_an_env_setting_a_host_with_its_own_credential_gives_no_warning(
    settings: str,
    environment: dict[str, str],
    tmp_path: Path,
    isolated_data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#43: the warning named every .env that set a host and its own key, which is what a
    .env is for; only a credential from elsewhere (the environment) is worth a word."""
    for name in os.environ:  # a CI token of the machine's is a credential from elsewhere
        if re.fullmatch(SECRET_NAME, name, re.I):
            monkeypatch.delenv(name)
    (tmp_path / ".env").write_text(settings)
    run = run_in(tmp_path, isolated_data_dir, "--list", **environment)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr == ""


def test_an_env_setting_a_key_beside_its_url_does_not_get_the_environments_key(
    tmp_path: Path, isolated_data_dir: Path, photo_gift_server: FakeServer
) -> None:
    """The key of the environment wins over the one the file sets: it would go to the
    file's URL, so this is refused as a base URL set without its key is."""
    (tmp_path / ".env").write_text(
        f"OPENAI_BASE_URL={photo_gift_server.url}\nOPENAI_API_KEY=its-own-key-0123\n"
        "OPENAI_MODEL=fake-model\n"
    )
    run = run_in(tmp_path, isolated_data_dir, "a strap gift", "--yes", OPENAI_API_KEY=KEY)
    assert run.returncode == 2, run.stdout + run.stderr
    assert not photo_gift_server.script.requests, "the environment's key went to the .env's URL"
    assert KEY not in run.stdout + run.stderr
