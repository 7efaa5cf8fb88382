"""The local server's choice settings: argument, else environment variable, else default."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from localmodel.errors import LocalModelSettingError

# ------------------------------------------------------------------ weight repacking

REPACK_SETTING = "LOCAL_MODEL_REPACK"
REPACK_CHOICES = ("auto", "all", "no-amx", "off")


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """True when the CPU reports AMX tiles (Linux /proc/cpuinfo flags; False elsewhere)."""
    with contextlib.suppress(OSError), cpuinfo.open() as fh:
        for line in fh:
            if line.startswith("flags"):
                return "amx_tile" in line.split(":", 1)[-1].split()
    return False


def _choice(
    setting: str | None, name: str, choices: tuple[str, ...], default: str, what: str
) -> str:
    """``setting``, else the environment variable ``name``, else ``default``; one of
    ``choices`` (any case, spaces ignored), or an error naming the variable and the choices."""
    value = setting if setting is not None else os.environ.get(name, "")
    mode = value.strip().lower() or default
    if mode not in choices:
        raise LocalModelSettingError(
            f"{name}={value!r} is not {what}; use one of: {', '.join(choices)}"
        )
    return mode


PROMPT_CACHE_SETTING = "LOCAL_MODEL_PROMPT_CACHE"
PROMPT_CACHE_CHOICES = ("ram", "disk", "off")
# On disk: a new server (after the keep-alive, a reboot) reads the planner prompt's prefix
# from the states an earlier one saved (a cold first plan step in 5.3 s instead of 12.7 s
# here), as fast as RAM when warm, and the states never grow the server's memory.
DEFAULT_PROMPT_CACHE = "disk"
# About 20 saved prompt states of the 1.5B model at ~25 MB each.
PROMPT_CACHE_BYTES = 512 * 1024 * 1024


def resolve_prompt_cache(setting: str | None = None) -> str:
    """llama-cpp-python's prompt cache for the server: ``setting``, else
    $LOCAL_MODEL_PROMPT_CACHE, else the default. ``disk`` keeps the saved states of recent
    prompts, so a planner prompt reuses its prefix even after a reasoning call, and across
    server restarts; ``ram`` keeps them in the server only; ``off`` keeps only the last."""
    return _choice(
        setting, PROMPT_CACHE_SETTING, PROMPT_CACHE_CHOICES, DEFAULT_PROMPT_CACHE, "a prompt cache"
    )


FAST_PATHS_SETTING = "LOCAL_MODEL_FAST_PATHS"
FAST_PATHS_CHOICES = ("on", "off")


def resolve_fast_paths(setting: str | None = None) -> str:
    """Whether the launcher speeds up llama-cpp-python's server (see localmodel.launcher):
    ``setting``, else $LOCAL_MODEL_FAST_PATHS, else ``on``. ``off`` runs it as shipped (the
    grammar tested on every vocabulary entry per token, the full logits buffer): the same
    answers, slower; for comparisons (bench/local_model.py) or to rule the launcher out."""
    return _choice(setting, FAST_PATHS_SETTING, FAST_PATHS_CHOICES, "on", "a choice")


JUMP_FORWARD_SETTING = "LOCAL_MODEL_JUMP_FORWARD"
DEFAULT_JUMP_FORWARD = "off"


def resolve_jump_forward(setting: str | None = None) -> str:
    """Whether the launcher evaluates the tokens the JSON grammar forces as one batch
    (localmodel.jump_forward; needs the fast paths): ``setting``, else
    $LOCAL_MODEL_JUMP_FORWARD, else the default."""
    return _choice(
        setting, JUMP_FORWARD_SETTING, FAST_PATHS_CHOICES, DEFAULT_JUMP_FORWARD, "a choice"
    )


def resolve_repack_mode(setting: str | None = None) -> str:
    """The repack mode for the server (see localmodel.launcher): ``setting``, else
    $LOCAL_MODEL_REPACK, else ``auto``. ``auto`` keeps llama.cpp's repacked kernels but
    refuses its AMX ones on a CPU that reports AMX: with GGML_NATIVE they are compiled in
    there, and they crashed the server (a GPF in ldtilecfg) in a micro-VM."""
    mode = _choice(setting, REPACK_SETTING, REPACK_CHOICES, "auto", "a repack mode")
    if mode == "auto":
        return "no-amx" if cpu_has_amx() else "all"
    return mode
