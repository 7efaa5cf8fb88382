"""Where catalogs live: local index directories, or a PostgreSQL database named by URL.

Light on purpose: no index engine or database driver is imported here."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TypeGuard

from catalog.errors import CatalogError

DATA_DIR_ENV = "SHOPPING_PLANNER_DATA_DIR"
# postgresql://... selects the PostgreSQL backend (catalog.postgres); unset: embedded tantivy.
CATALOG_URL_ENV = "CATALOG_URL"
POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")


def env(name: str) -> str | None:
    """The environment variable `name` without surrounding blanks; None when unset or blank."""
    return os.environ.get(name, "").strip() or None


def data_dir() -> Path:
    """The one per-user data directory, for catalog indexes, runs, and the assembled local
    model: ``$SHOPPING_PLANNER_DATA_DIR``, else ``$XDG_DATA_HOME/shopping-planner``, else
    ``~/.local/share/shopping-planner``. A blank variable counts as unset."""
    explicit = env(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = env("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "shopping-planner"


# Runs, logs and caches hold requests and model output: only their owner may read them.
PRIVATE_UMASK = 0o077


def keep_data_private(folder: Path | None = None) -> None:
    """Make what this process creates from now on private (0700 folders, 0600 files), and
    close an existing data folder created open by an older version. Called by each entry
    point (the CLIs, the eval) before its first write; a library never changes the umask."""
    os.umask(PRIVATE_UMASK)
    folder = folder or data_dir()
    try:
        info = os.stat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
            os.chmod(folder, 0o700)
    except OSError:
        pass  # no folder yet (it is created private), or not ours to change


def default_index_dir() -> Path:
    return data_dir() / "catalog"


def is_postgres_url(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value.strip().lower().startswith(POSTGRES_URL_SCHEMES)


# Credentials in text: a URL's userinfo (user:password@ up to the last @, as a password may
# hold a raw / or @; a lone token@; the scheme's // mistyped too), and a value named like a
# password, key, token or secret, in a URL's query (?password=, &api-key=) or a libpq
# string (password='a b'), the punctuation closing a sentence or a bracket left out.
_USERINFO = re.compile(r"(:/+[^:/@\s]+):\S*@|:/+[^:/@\s]+@")
SECRET_NAME = r"[\w-]*(?:pass(?:wd|word)?|key|token|secret)"  # PGPASSWORD, api-key
NAMED_SECRET = re.compile(rf"(?i)(\b{SECRET_NAME}\s*=\s*)('[^']*'|[^\s&#'\"]*[^\s&#'\":;,.)\]])")


def redact_url(url: str) -> str:
    """`url` (or any text holding URLs or libpq connection strings) with the credentials
    in it masked, for messages: user:password@ keeps the user, a lone token@ is masked
    whole, and a named secret keeps its name (password=***)."""
    text = _USERINFO.sub(lambda m: f"{m[1]}:***@" if m[1] else "://***@", url)
    return NAMED_SECRET.sub(r"\1***", text)


def check_catalog_file(path: Path) -> None:
    """Refuse, before opening it, a catalog path that is not a regular file: reading a
    device (/dev/zero) never ends and opening a FIFO blocks until a writer comes."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks; a loop raises ELOOP
    except FileNotFoundError:
        raise CatalogError("file not found", path=path) from None
    except OSError as exc:
        raise CatalogError(f"cannot read file: {exc.strerror}", path=path) from None
    if stat.S_ISDIR(mode):
        raise CatalogError("is a directory, expected a catalog file", path=path)
    if not stat.S_ISREG(mode):
        raise CatalogError(
            "not a regular file (a device, FIFO or socket); a catalog is read from a file",
            path=path,
        )


def catalog_url_from_env() -> str | None:
    """``$CATALOG_URL``, or None when unset or blank.

    The one place the variable is read. Entry points (the catalog CLIs, the graph's
    ``Context``) call it once and pass the URL down explicitly, so nothing below them,
    and no cache, depends on the environment.
    """
    return env(CATALOG_URL_ENV)
