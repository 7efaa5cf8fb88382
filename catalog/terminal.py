"""Untrusted text for the terminal: the one helper both CLIs print such text through.

Text that the code did not write (model output, catalog records, the shopper's request,
thread ids, model names, provider error bodies) may hold rich markup ("[/]", "[link=...]"),
terminal escape sequences ("ESC[2J"), bidi overrides that reorder what is shown, lone
surrogates that cannot be encoded, or a single word of megabytes. `terminal_text` makes it
safe to show: invisible and control characters become visible escapes (\\x1b, \\u202e),
and the text is cut to a stated length so printing stays linear and bounded.

Consoles built by `terminal_console` also switch rich's highlighter off: its regexes take
time quadratic in the length of an unbroken word (a 100 KB word took 58 s to print).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator
from typing import IO, Any, cast

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from catalog.exits import StdoutUnwritable, stdout_closed

# Characters of a piece of untrusted text shown at most (a product title, an answer, a
# request); longer text is cut with an ellipsis. Error lines, which hold the code's own
# explanation around the untrusted part, get ERROR_DISPLAY_CHARS.
DISPLAY_CHARS = 500
ERROR_DISPLAY_CHARS = 2000
# Unicode categories never shown raw: controls (Cc: ESC, BEL, CR...), format characters
# (Cf: bidi overrides and isolates, zero-width marks), lone surrogates (Cs, which cannot
# be encoded), and line/paragraph separators (Zl, Zp).
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Whitespace controls that mean "a gap" in running text; they become one space.
_SPACES = {"\n": " ", "\t": " "}


def _visible(char: str) -> str:
    if char in _SPACES:
        return _SPACES[char]
    if unicodedata.category(char) in _HIDDEN_CATEGORIES:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def clean_text(value: Any, limit: int = DISPLAY_CHARS, *, keep_newlines: bool = False) -> str:
    """`value` as plain text safe for a terminal: hidden characters shown as escapes, and
    cut to `limit` characters (an ellipsis marks the cut). With `keep_newlines`, line
    breaks stay (for multi-line messages the code wrote); each line is cleaned alike."""
    text = value if isinstance(value, str) else str(value)
    # Cut first (with room for escapes to grow), so cleaning is bounded by `limit`.
    cut = len(text) > limit
    text = text[:limit]
    shown = "".join(char if keep_newlines and char == "\n" else _visible(char) for char in text)
    if len(shown) > limit:
        shown, cut = shown[:limit], True
    return shown + "…" if cut else shown


def terminal_text(
    value: Any, limit: int = DISPLAY_CHARS, *, style: str = "", keep_newlines: bool = False
) -> Text:
    """Untrusted `value` as a rich `Text`: never read as markup, shown visibly, bounded."""
    return Text(clean_text(value, limit, keep_newlines=keep_newlines), style=style)


def terminal_markup(value: Any, limit: int = DISPLAY_CHARS, *, keep_newlines: bool = False) -> str:
    """Untrusted `value` to place inside a rich markup string (cleaned and escaped)."""
    return escape(clean_text(value, limit, keep_newlines=keep_newlines))


class _CliConsole(Console):
    def on_broken_pipe(self) -> None:
        # rich's own handler exits with status 1, which reads as a failure.
        raise SystemExit(stdout_closed())


class _Stdout:
    """sys.stdout (whichever it is now), whose refusal of a write other than a closed pipe
    (rich's on_broken_pipe) is StdoutUnwritable: rich lets any other OSError through."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)

    def write(self, text: str) -> int:
        with _refusal_named():
            return sys.stdout.write(text)

    def flush(self) -> None:
        with _refusal_named():
            sys.stdout.flush()


@contextlib.contextmanager
def _refusal_named() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        raise StdoutUnwritable(f"cannot write to stdout: {error.strerror or error}") from error


# What a CLI prints to: the rest is sys.stdout's own.
STDOUT = cast(IO[str], _Stdout())


def terminal_console(*, stderr: bool = False, **options: Any) -> Console:
    """A rich console for a CLI: no automatic highlighting (super-linear on long words,
    and it would colour parts of untrusted text as if they meant something), a closed
    stdout ends the process quietly with the status SIGPIPE would give, and a stdout that
    refuses a write otherwise (a full device) raises StdoutUnwritable."""
    if not stderr:  # a console of a file of its own keeps it
        options.setdefault("file", STDOUT)
    return _CliConsole(stderr=stderr, highlight=False, **options)


def command_line_text(argument: str) -> str:
    """A command-line argument as its bytes mean it. Under an ASCII locale (LC_ALL=C with
    UTF-8 mode off) Python decodes arguments with surrogate escapes, so a request's "€"
    arrives as lone surrogates and its limit is lost; the bytes are UTF-8 in practice,
    and are read so (bytes that are not stay escapes, shown as such)."""
    if not any("\udc80" <= char <= "\udcff" for char in argument):
        return argument
    try:
        raw = argument.encode(sys.getfilesystemencoding(), "surrogateescape")
    except UnicodeEncodeError:  # not what the locale's decoding made: leave it
        return argument
    return raw.decode("utf-8", "surrogateescape")


def survive_any_locale() -> None:
    """Let a CLI run under any locale: stdout and stderr show what their encoding lacks
    as escapes ("\\u2713") instead of raising UnicodeEncodeError mid-run, and stdin
    under an ASCII locale is read as UTF-8, as the command line is."""
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            continue
        if not codecs.lookup(stream.encoding).name.startswith("utf-"):
            stream.reconfigure(errors="backslashreplace")
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper) and codecs.lookup(stdin.encoding).name == "ascii":
        stdin.reconfigure(encoding="utf-8", errors="surrogateescape")


# A load shorter than this shows no progress (the shipped catalog takes a fraction of a
# second); past it, a bar on a terminal, and a plain line every LOG_EVERY_S in a log.
LONG_LOAD_S = 1.0
LOG_EVERY_S = 10.0


@contextlib.contextmanager
def load_progress(
    label: str, console: Console | None = None
) -> Iterator[Callable[[int, int], None]]:
    """Progress of a long load on stderr (never stdout, so --json output stays JSON):
    yields `advance(done, total)`. On a terminal, rich's bar, once the load has taken
    LONG_LOAD_S, removed when it ends; elsewhere, a line every LOG_EVERY_S past that."""
    console = console or terminal_console(stderr=True)
    started = time.monotonic()
    bar: Progress | None = None
    task: TaskID | None = None
    logged_at = started

    def advance(done: int, total: int) -> None:
        nonlocal bar, task, logged_at
        now = time.monotonic()
        if now - started < LONG_LOAD_S:
            return
        if console.is_terminal:
            if bar is None or task is None:  # both are set together
                bar = Progress(
                    TextColumn(escape(label)),
                    BarColumn(),
                    TaskProgressColumn(),
                    TimeElapsedColumn(),
                    console=console,
                    transient=True,
                )
                bar.start()
                task = bar.add_task(label, total=total)
            bar.update(task, completed=done, total=total)
        elif now - logged_at >= LOG_EVERY_S or (done >= total and logged_at != started):
            logged_at = now
            share = done / total if total else 1.0
            console.print(
                f"{terminal_markup(label)}: {share:.0%} ({now - started:.0f} s)", soft_wrap=True
            )

    try:
        yield advance
    finally:
        if bar is not None:
            bar.stop()
