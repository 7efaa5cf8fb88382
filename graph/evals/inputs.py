"""The eval's arguments, checked before the first goal runs: each input file readable and
of the right shape, `--limit` a count of goals, `--out` writable, and the report written
so that a failed write never leaves half a report behind.

Every problem is an `EvalInputError` whose message names the file (or flag) and what is
wrong with it; `python -m graph.eval` prints it as one `error:` line.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from catalog.exits import EXIT_BAD_INPUT


class EvalInputError(ValueError):
    """An eval argument or input file that cannot be used; the message names it."""

    exit_code = EXIT_BAD_INPUT  # the code the eval ends with (catalog.exits)


def read_text(path: Path, what: str) -> str:
    """The text of an input file, or an EvalInputError naming it and why it cannot be read
    (missing, a directory, a FIFO or device, unreadable, not UTF-8)."""
    try:
        # Checked before opening: reading a FIFO or /dev/zero would never end.
        if not stat.S_ISREG(path.stat().st_mode):
            raise EvalInputError(f"{what} {path}: not a regular file")
        return path.read_text(encoding="utf-8")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise EvalInputError(f"{what} {path}: cannot read it: {reason}") from None
    except UnicodeDecodeError as error:
        raise EvalInputError(
            f"{what} {path}: not UTF-8 text (byte {error.start} cannot be decoded)"
        ) from None


def _parsed(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise EvalInputError(
            f"{where}: not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:  # nesting deeper than the parser goes
        raise EvalInputError(f"{where}: not JSON the eval can read (nested too deeply)") from None


def read_json(path: Path, what: str) -> Any:
    """A JSON input file, parsed; an EvalInputError names the file and the problem."""
    return _parsed(read_text(path, what), f"{what} {path}")


def read_jsonl(path: Path, what: str) -> list[tuple[int, Any]]:
    """A JSON Lines input file as (line number, record) pairs, blank lines skipped."""
    lines = read_text(path, what).split("\n")
    records = [
        (number, _parsed(line, f"{what} {path} line {number}"))
        for number, line in enumerate(lines, start=1)
        if line.strip()
    ]
    if not records:
        raise EvalInputError(f"{what} {path}: no records")
    return records


def is_number(value: Any) -> bool:
    """A finite int or float (JSON's true and false are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_limit(limit: int | None) -> None:
    """`--limit N` runs the first N goals: N is at least 1 (0 used to run them all)."""
    if limit is not None and limit < 1:
        raise EvalInputError(f"--limit must be 1 or more (the number of goals to run), got {limit}")


def report_paths(out: Path) -> tuple[Path, Path]:
    """The JSON report and its Markdown table beside it."""
    return out, out.with_suffix(".md")


def check_out(out: Path | None, inputs: Iterable[Path | None] = ()) -> None:
    """`--out` can be written, checked before the first goal rather than after the last:
    its folder exists and takes a new file, neither the report nor the table beside it is
    a directory or a read-only file, and neither would overwrite one of the eval's inputs."""
    if out is None:
        return
    if out.suffix == ".md":
        raise EvalInputError(f"--out {out}: give a .json path; the table is written beside it")
    folder = out.parent
    if not folder.is_dir():
        raise EvalInputError(f"--out {out}: folder {folder} does not exist")
    given = [Path(p) for p in inputs if p is not None]
    for path in report_paths(out):
        if path.is_dir():
            raise EvalInputError(f"--out {out}: {path} is a directory")
        if path.exists() and not os.access(path, os.W_OK):
            raise EvalInputError(f"--out {out}: {path} is read-only")
        for source in given:
            if path.exists() and source.exists() and os.path.samefile(path, source):
                raise EvalInputError(f"--out {out}: {path} is an input of this eval")
    try:  # the one sure test (root passes os.access, a read-only mount does not)
        probe, name = tempfile.mkstemp(dir=folder, prefix=".eval-out-")
        os.close(probe)
        os.unlink(name)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise EvalInputError(f"--out {out}: cannot write in {folder}: {reason}") from None


def write_atomically(path: Path, text: str) -> None:
    """Write `path` through a temporary file beside it and a rename, so a failed write
    (disk full, Ctrl-C) leaves the old report whole rather than half a new one."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
