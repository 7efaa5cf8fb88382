"""Starts llama-cpp-python's own OpenAI-compatible server, with the llama.cpp weight-repacking
choice that its command line does not expose.

    python -m localmodel.launcher --repack no-amx -- --model m.gguf --port 8000 ...

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

It also speeds up the server where llama-cpp-python is slow for this project's calls,
without changing an answer (``--fast-paths on``, the default; ``off`` runs it as shipped):
greedy sampling checks the JSON grammar on the chosen token first
(GrammarLastGreedySampler), a model loaded without ``logits_all`` keeps a one-row
logits buffer (keep_one_logits_row). ``--jump-forward on`` also evaluates the tokens the
grammar forces as one batch (localmodel.jump_forward); off by default, since batched logits
are not bit-identical to one-token decodes here.

For a warm server shared by several runs (localmodel.warm) it also takes:

- ``--api-key-file``: the bearer key every request must carry, read from a file only the
  user can read (never on the command line, where any local user could see it);
- ``--keep-alive S``: exit once no request has arrived for S seconds and no client holds a
  shared lock on ``--users-file``;
- ``--fingerprint F``: served (behind the key) at ``GET /shopping-planner/server``, so a
  client reuses the server only if it was started for the same model and settings.

This module is the child process's entry point: it must stay importable without LangGraph.
It imports llama_cpp, numpy, fastapi and pyseccomp inside the functions that patch them:
the parent imports this module (warm.py hashes it, tests import its helpers) where the
`local` extra may not be installed, and an AMX refusal must be in force before llama.cpp
loads.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPACK_MODES = ("all", "no-amx", "off")
# How long an OpenMP thread spins at a barrier before it sleeps. llama.cpp's threads meet
# at a barrier after every operation; libgomp's default (300,000 spins) keeps a waiting
# thread on its core, so beside one busy process its partner never gets a core and a
# request took 75x its time. 100 is what libgomp itself uses when it sees more threads
# than CPUs; it cannot see another program's load (docs/embedded-model.md).
SPIN_COUNT = "100"
IDENTITY_PATH = "/shopping-planner/server"
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


def keep_one_logits_row() -> None:
    """Give a model loaded without ``logits_all`` a one-row logits buffer.

    llama-cpp-python allocates ``n_batch x n_vocab`` floats (311 MB for this model) that it
    never writes without ``logits_all``: sampling reads llama.cpp's own logits. Yet every
    prompt-cache save copies the rows in use and every load writes the whole buffer, a few
    hundred ms per request (more the first time, when the pages are first touched). One row
    keeps the code paths that index the last row working; logprobs, the only reader of the
    others, are refused without ``logits_all``."""
    import numpy as np
    from llama_cpp import Llama

    init = Llama.__init__

    def init_with_one_row(self: Llama, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if not self._logits_all:
            self.scores = np.zeros((1, self._n_vocab), dtype=np.single)

    Llama.__init__ = init_with_one_row


def install_prompt_cache(kind: str, directory: Path | None) -> None:
    """Make llama-cpp-python's prompt caches (``--cache true --cache_type ram|disk``) keep
    lean states, and let the disk cache keep an entry it serves.

    Without ``logits_all`` the server never reads the saved logits (sampling happens in
    llama.cpp's sampler), yet each saved state copies an ``n_batch x n_vocab`` array: 311 MB
    for this model, beside ~25 MB of KV cache, and the RAM cache does not count it against
    its capacity. One row is kept, which ``load_state`` broadcasts. The library's disk cache
    also pops an entry when it serves it, so a reasoning call in between would drop the
    planner's prefix for good."""
    import llama_cpp
    from llama_cpp.llama import LlamaState

    class Lean(llama_cpp.BaseLlamaCache):
        def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
            # The library stores the state save_state() just made and keeps no other
            # reference to it, so it is trimmed in place.
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    class LeanRAMCache(Lean, llama_cpp.LlamaRAMCache):
        pass

    class KeepingDiskCache(Lean, llama_cpp.LlamaDiskCache):
        def __init__(self, capacity_bytes: int = 2 << 30) -> None:
            super().__init__(cache_dir=str(directory), capacity_bytes=capacity_bytes)

        def __getitem__(self, key: Sequence[int]) -> LlamaState:
            found = self._find_longest_prefix_key(tuple(key))
            if found is None:
                raise KeyError("Key not found")
            return self.cache[found]

    if kind == "disk":
        if directory is None:
            raise ValueError("a disk prompt cache needs --prompt-cache-dir")
        directory.mkdir(parents=True, exist_ok=True)
        llama_cpp.LlamaDiskCache = KeepingDiskCache
    else:
        llama_cpp.LlamaRAMCache = LeanRAMCache


def stream_as_openai_does() -> None:
    """Make llama-cpp-python's streamed chat completions read as OpenAI's do.

    - Each tool-call delta repeats the call's id, type and function name, which an OpenAI
      client concatenates ("PlanPlanPlan…"); OpenAI sends them in the first delta only.
    - The stream carries no usage. OpenAI ends it with a chunk holding ``usage`` (and no
      choices) when asked; it is added, counted as the server counts a whole answer: the
      prompt tokens it was given and one per generated token (each delta is one token)."""
    from llama_cpp import Llama

    generate = Llama.generate
    create_chat_completion = Llama.create_chat_completion

    def generate_counting_prompt(self: Llama, tokens: Sequence[int], *args: Any, **kwargs: Any):
        self._streamed_prompt_tokens = len(tokens)
        return generate(self, tokens, *args, **kwargs)

    def compliant(self: Llama, *args: Any, **kwargs: Any) -> Any:
        result = create_chat_completion(self, *args, **kwargs)
        if not kwargs.get("stream"):
            return result

        def chunks() -> Any:
            generated, last, named = 0, None, set()
            for chunk in result:
                delta = chunk["choices"][0].get("delta") or {} if chunk["choices"] else {}
                calls = delta.get("tool_calls") or []
                if delta.get("content") or any(c["function"].get("arguments") for c in calls):
                    generated += 1
                for call in calls:
                    if call["index"] in named:
                        call.pop("id", None)
                        call.pop("type", None)
                        call["function"].pop("name", None)
                    named.add(call["index"])
                if calls:
                    delta.pop("function_call", None)  # the legacy field repeats them too
                last = chunk
                yield chunk
            if last is not None:
                prompt = getattr(self, "_streamed_prompt_tokens", 0)
                yield {
                    **last,  # its id, object ("chat.completion.chunk"), created and model
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": generated,
                        "total_tokens": prompt + generated,
                    },
                }

        return chunks()

    Llama.generate = generate_counting_prompt
    Llama.create_chat_completion = compliant


class GrammarLastGreedySampler:
    """Greedy sampling under a grammar, with the grammar checked on the chosen token first.

    llama-cpp-python puts the grammar in the sampler chain ahead of the sampler, so every
    token tests all 151k vocabulary entries against the grammar: about 14 ms a token here,
    a third of the time to write a plan. llama.cpp's own ``common_sampler`` picks a token
    without the grammar, checks only that token, and applies the grammar to the whole
    vocabulary only when the token does not fit. Under greedy sampling that is the same
    token: the best token overall, when the grammar allows it, is the best allowed token.
    Penalties only scale or shift logits, so they commute with the grammar's -inf mask."""

    def __init__(self, llama: Any, grammar: Any, penalties: dict[str, Any]) -> None:
        import numpy as np
        from llama_cpp import _internals

        self._chain = _internals.LlamaSampler()
        self._chain.add_penalties(n_vocab=llama._n_vocab, **penalties)
        self._chain.add_greedy()
        self._grammar = _internals.LlamaSampler()
        self._grammar.add_grammar(llama._model, grammar)
        self._n_vocab = llama._n_vocab
        fields = [("id", np.intc), ("logit", np.single), ("p", np.single)]
        self._candidates = np.zeros(self._n_vocab, dtype=np.dtype(fields, align=True))
        self._candidates["id"] = np.arange(self._n_vocab)
        self.refused = 0  # chosen tokens the grammar did not allow (then chosen again)
        self.written: list[int] = []  # what it sampled, for the jump-forward draft

    @property
    def grammar_sampler(self) -> Any:
        """The llama.cpp sampler holding the grammar's state (a draft walks a clone)."""
        return self._grammar.sampler

    def _all_tokens(self, ctx: Any, idx: int) -> Any:
        """Every token with its logit, as ``llama_sampler_sample`` builds it."""
        import numpy as np
        from llama_cpp import llama_cpp as lib

        logits = lib.llama_get_logits_ith(ctx.ctx, idx)
        self._candidates["logit"] = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
        self._candidates["p"] = 0.0
        data = self._candidates.ctypes.data_as(lib.llama_token_data_p)
        return lib.llama_token_data_array(data=data, size=self._n_vocab, selected=-1)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        import ctypes
        import math

        from llama_cpp import llama_cpp as lib

        candidates = self._all_tokens(ctx, idx)
        lib.llama_sampler_apply(self._chain.sampler, ctypes.byref(candidates))
        chosen = candidates.data[candidates.selected]
        single = (lib.llama_token_data * 1)(lib.llama_token_data(chosen.id, chosen.logit, 0.0))
        check = lib.llama_token_data_array(data=single, size=1, selected=-1)
        lib.llama_sampler_apply(self._grammar.sampler, ctypes.byref(check))
        token = int(chosen.id)
        if math.isinf(single[0].logit):  # not allowed here: choose among allowed tokens
            self.refused += 1
            candidates = self._all_tokens(ctx, idx)
            lib.llama_sampler_apply(self._grammar.sampler, ctypes.byref(candidates))
            lib.llama_sampler_apply(self._chain.sampler, ctypes.byref(candidates))
            token = int(candidates.data[candidates.selected].id)
        self._chain.accept(token)
        self._grammar.accept(token)
        self.written.append(token)
        return token

    def close(self) -> None:
        self._chain.close()
        self._grammar.close()


def sample_grammar_last() -> None:
    """Use GrammarLastGreedySampler wherever llama-cpp-python samples greedily under a
    grammar (the planner and every structured answer, at temperature 0); every other
    sampling setting keeps the library's own chain."""
    from llama_cpp import Llama

    init_sampler = Llama._init_sampler

    def init_sampler_grammar_last(self: Llama, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        plain = kwargs.get("mirostat_mode", 0) == 0 and kwargs.get("logits_processor") is None
        if grammar is None or kwargs.get("temp") != 0.0 or not plain:
            return init_sampler(self, **kwargs)
        penalties = {
            "penalty_last_n": self.last_n_tokens_size,
            "penalty_repeat": kwargs.get("repeat_penalty", 1.0),
            "penalty_freq": kwargs.get("frequency_penalty", 0.0),
            "penalty_present": kwargs.get("presence_penalty", 0.0),
        }
        return GrammarLastGreedySampler(self, grammar, penalties)

    Llama._init_sampler = init_sampler_grammar_last


def nobody_holds(users_file: Path) -> bool:
    """True when no client holds its shared lock on `users_file` (a client that dies
    releases its lock with it)."""
    try:
        fd = os.open(users_file, os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # also drops the probe's own lock
    return True


class KeepAlive:
    """Tracks requests and clients; stops the server after `seconds` of idleness."""

    def __init__(self, seconds: float, users_file: Path | None, cleanup: Sequence[Path]) -> None:
        self.seconds = seconds
        self.users_file = users_file
        self.cleanup = tuple(cleanup)
        self.in_flight = 0
        self.idle_since = time.monotonic()

    def request_started(self) -> None:
        self.in_flight += 1

    def request_finished(self) -> None:
        self.in_flight -= 1
        self.idle_since = time.monotonic()

    def idle_for(self) -> float:
        if self.in_flight or (self.users_file and not nobody_holds(self.users_file)):
            self.idle_since = time.monotonic()  # counting starts when the last client leaves
            return 0.0
        return time.monotonic() - self.idle_since

    def watch(self, poll_s: float = 1.0) -> None:
        while self.idle_for() < self.seconds:
            time.sleep(poll_s)
        for path in self.cleanup:
            with contextlib.suppress(OSError):
                path.unlink()
        os.kill(os.getpid(), signal.SIGTERM)  # uvicorn shuts down cleanly on SIGTERM


def extend_app(app: Any, keep_alive: KeepAlive | None, fingerprint: str | None) -> Any:
    """Add the keep-alive request tracking and the fingerprint route to the server's app."""
    from fastapi import Depends
    from llama_cpp.server.app import authenticate

    if keep_alive is not None:

        @app.middleware("http")
        async def track_requests(request: Any, call_next: Any) -> Any:
            if request.url.path == IDENTITY_PATH:  # a status check is not a use
                return await call_next(request)
            keep_alive.request_started()
            try:
                return await call_next(request)
            finally:
                keep_alive.request_finished()

    @app.get(IDENTITY_PATH, dependencies=[Depends(authenticate)])
    async def server_identity() -> dict[str, Any]:
        return {
            "fingerprint": fingerprint,
            "pid": os.getpid(),
            "keep_alive_s": keep_alive.seconds if keep_alive else None,
        }

    return app


def _server_option(server_args: Sequence[str], name: str, default: str) -> str:
    """The last value given for `name` among the server's arguments (argparse's rule)."""
    values = [server_args[i + 1] for i, arg in enumerate(server_args[:-1]) if arg == name]
    return values[-1] if values else default


def bound_spinning() -> None:
    """Let llama.cpp's threads sleep soon at a barrier, unless the user chose how OpenMP
    waits. libgomp reads this when it loads, so it must run before llama_cpp is imported."""
    if not os.environ.get("GOMP_SPINCOUNT") and not os.environ.get("OMP_WAIT_POLICY"):
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m localmodel.launcher")
    parser.add_argument("--repack", choices=REPACK_MODES, default="all")
    parser.add_argument(
        "--fast-paths",
        choices=("on", "off"),
        default="on",
        help="off: llama-cpp-python's own sampling and logits buffer, as shipped",
    )
    parser.add_argument(
        "--jump-forward",
        choices=("on", "off"),
        # Off by default: a batch's logits differ from one-token decodes by up to ~0.5 here,
        # which changed one plan of two at a near tie (docs/embedded-model.md).
        default="off",
        help="with --fast-paths on: evaluate the tokens the grammar forces as one batch",
    )
    parser.add_argument("--api-key-file", type=Path)
    parser.add_argument("--keep-alive", type=float, help="seconds idle before exiting")
    parser.add_argument("--users-file", type=Path)
    parser.add_argument("--state-file", type=Path, help="removed when the server exits idle")
    parser.add_argument("--fingerprint")
    parser.add_argument("--prompt-cache-dir", type=Path, help="where a disk prompt cache lives")
    parser.add_argument("server_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    server_args = args.server_args[1:] if args.server_args[:1] == ["--"] else args.server_args
    bound_spinning()
    in_force = apply_repack_mode(args.repack)
    print(
        f"llama_launcher: weight repacking {in_force}; OpenMP spin count "
        f"{os.environ.get('GOMP_SPINCOUNT', 'as OMP_WAIT_POLICY sets it')}",
        file=sys.stderr,
        flush=True,
    )
    stream_as_openai_does()
    jumping = args.fast_paths == "on" and args.jump_forward == "on"
    if args.fast_paths == "on":
        sample_grammar_last()
        keep_one_logits_row()
    if jumping:
        from localmodel.jump_forward import jump_forward

        jump_forward()
    print(
        f"llama_launcher: fast paths {args.fast_paths}, jump-forward {'on' if jumping else 'off'}",
        file=sys.stderr,
        flush=True,
    )
    if _server_option(server_args, "--cache", "false").lower() == "true":
        install_prompt_cache(
            _server_option(server_args, "--cache_type", "ram"), args.prompt_cache_dir
        )

    # The server reads these from the environment over its own arguments: an unrelated
    # HOST or PORT in the user's shell must not move it off loopback.
    for name in ("HOST", "PORT", "API_KEY", "CONFIG_FILE"):
        os.environ.pop(name, None)
    if args.api_key_file:
        os.environ["API_KEY"] = args.api_key_file.read_text().strip()
    keep_alive = None
    if args.keep_alive:
        cleanup = [p for p in (args.state_file, args.api_key_file) if p]
        keep_alive = KeepAlive(args.keep_alive, args.users_file, cleanup)
        threading.Thread(target=keep_alive.watch, daemon=True).start()

    import llama_cpp.server.__main__ as server_main

    create_app = server_main.create_app
    server_main.create_app = lambda **kwargs: extend_app(
        create_app(**kwargs), keep_alive, args.fingerprint
    )
    sys.argv = ["llama_cpp.server", *server_args]
    server_main.main()


if __name__ == "__main__":
    main()
