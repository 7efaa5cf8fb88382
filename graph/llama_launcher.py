"""Starts llama-cpp-python's own OpenAI-compatible server, with the llama.cpp weight-repacking
choice that its command line does not expose.

    python -m graph.llama_launcher --repack no-amx -- --model m.gguf --port 8000 ...

Everything after ``--`` goes to ``python -m llama_cpp.server`` unchanged. The repack modes:

- ``all``: every repacked CPU kernel llama.cpp offers, AMX tiles included (its default).
- ``no-amx``: repacked weights with the AVX2/AVX-512 kernels, but llama.cpp's AMX kernels are
  refused. A build made with ``GGML_NATIVE`` on a CPU that reports AMX uses AMX for Q4_K
  weights, and in some VMs ``ldtilecfg`` then raises a general protection fault that kills
  the server. AMX is enabled only through ``arch_prctl(ARCH_REQ_XCOMP_PERM)``; a seccomp
  filter makes that one call fail, so llama.cpp drops the AMX buffer type by itself ("AMX is
  not ready to be used!") and keeps its other repacking.
- ``off``: no extra buffer types at all (llama.cpp's ``--no-repack``): slower, but uses no
  repacked kernel. The fallback when seccomp cannot be used.

This module is the child process's entry point: it must stay importable without LangGraph.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Sequence

REPACK_MODES = ("all", "no-amx", "off")
# arch_prctl(2) request that asks the kernel for permission to use AMX tile data.
ARCH_REQ_XCOMP_PERM = 0x1023


def refuse_amx() -> None:
    """Make ``arch_prctl(ARCH_REQ_XCOMP_PERM, ...)`` fail with EPERM in this process and its
    children. Raises OSError (or ImportError) when seccomp cannot be set up here."""
    import pyseccomp as seccomp

    syscall_filter = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    syscall_filter.add_rule(
        seccomp.ERRNO(errno.EPERM), "arch_prctl", seccomp.Arg(0, seccomp.EQ, ARCH_REQ_XCOMP_PERM)
    )
    syscall_filter.load()


def turn_off_repacking() -> None:
    """Load models with ``use_extra_bufts = false``, as llama.cpp's ``--no-repack`` does.
    llama-cpp-python builds its model params from ``llama_model_default_params()``."""
    import llama_cpp.llama_cpp as llama_lib

    library_defaults = llama_lib.llama_model_default_params

    def defaults_without_repacking() -> llama_lib.llama_model_params:
        params = library_defaults()
        params.use_extra_bufts = False
        return params

    llama_lib.llama_model_default_params = defaults_without_repacking


def apply_repack_mode(mode: str) -> str:
    """Set up this process for ``mode``; returns the mode actually in force."""
    if mode == "no-amx":
        try:
            refuse_amx()
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            print(
                f"llama_launcher: cannot refuse AMX with seccomp ({type(exc).__name__}: {exc}); "
                "turning weight repacking off instead",
                file=sys.stderr,
                flush=True,
            )
            mode = "off"
    if mode == "off":
        turn_off_repacking()
    return mode


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m graph.llama_launcher")
    parser.add_argument("--repack", choices=REPACK_MODES, default="all")
    parser.add_argument("server_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    server_args = args.server_args[1:] if args.server_args[:1] == ["--"] else args.server_args
    in_force = apply_repack_mode(args.repack)
    print(f"llama_launcher: weight repacking {in_force}", file=sys.stderr, flush=True)

    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *server_args]
    serve()


if __name__ == "__main__":
    main()
