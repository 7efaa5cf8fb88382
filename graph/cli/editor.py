"""Asking a person to approve, reject, edit or change the plan; opening it in an editor."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

from rich.console import Console
from rich.text import Text

from catalog.paths import env
from catalog.terminal import terminal_markup
from graph.cli.render import RunView
from graph.runs.approval import ApprovalDecision, ApprovalRequest, review_edit
from graph.runs.session import Approver
from graph.shaping.edits import MAX_EDIT_CHARS, PlanEditError, plan_text, read_plan_text


def approver(args: argparse.Namespace, console: Console, view: RunView) -> Approver:
    """The session's approval callback: show the plan and estimate, then ask (or --yes)."""

    changes = list(args.revise or [])  # --revise: each sent in turn, before a person is asked
    shown = [1]  # the plan versions shown (a refused change shows none anew)

    def approve(request: ApprovalRequest) -> bool | ApprovalDecision | None:
        version = request.revision["version"] if request.revision else 1
        if not view.plan_shown or version not in shown:
            if request.revision:
                view.revision(request.revision)
            view.plan(request.plan, limits=request.limits, follow_up=request.follow_up)
            shown.append(version)
        view.show_estimate(request.estimate)
        view.plan_warnings(request.warnings)
        if request.error:
            view.edit_refused(request.error)
        if changes:
            return ApprovalDecision(False, revise=changes.pop(0))
        if args.yes:
            return True
        resume = f"--resume {terminal_markup(view.thread_id, 80)} --yes"
        if not sys.stdin.isatty():
            console.print(
                "[bold red]error:[/] the plan needs approval, but there is no terminal to ask: "
                f"pass --yes to approve it (the run is saved; {resume} continues it)"
            )
            return None
        try:
            return ask_approval(console, view, request)
        except EOFError:  # Ctrl-D: no answer; the run stays paused at its plan
            console.print(f"\nno answer given; the run is saved ({resume} continues it)")
            return None

    return approve


ANSWERS = ("approve", "reject", "edit", "change")


def ask_approval(console: Console, view: RunView, request: ApprovalRequest) -> ApprovalDecision:
    """Ask approve, reject, edit or change until the person approves, rejects or says in
    words what to change (the graph revises the plan shown and asks again). An edit is
    read back, checked and shown with its changes and estimate; an invalid one never runs."""
    current = request.plan  # what approving runs: the model's plan or the last valid edit
    estimate = request.estimate  # and its cost estimate, made once per plan version
    text = plan_text(current)  # what the editor opens: the plan, or a failed edit to fix
    choice = ask(console, "Run this plan?", ANSWERS)
    while True:
        if choice == "change":
            words = console.input(Text("What should change? ")).strip()
            if words:
                return ApprovalDecision(False, revise=words)
            view.edit_refused('no change said: say what to change, e.g. "cheaper, under $40"')
            choice = ask(console, "Run this plan?", ANSWERS)
            continue
        if choice == "approve":
            if current == request.plan:
                return ApprovalDecision(True)
            return ApprovalDecision(True, current, estimate)
        if choice == "reject":
            return ApprovalDecision(False)
        try:
            saved = edit_in_editor(text)
            plan = read_plan_text(saved, current)
        except EditorError as error:
            # The command comes from $EDITOR: shown as text, never as markup.
            console.print(f"[bold red]error:[/] {terminal_markup(str(error))}", soft_wrap=True)
        except PlanEditError as error:
            view.edit_problems(error.problems)
            text = saved
            choice = ask(console, "Edit it again or reject the plan?", ("edit", "reject"))
            continue
        else:
            if plan is None:
                console.print("No edit: the plan is unchanged.")
            else:
                review = review_edit(request, plan)
                current, estimate = plan, review.estimate
                view.edit_review(review)
            text = plan_text(current)
        choice = ask(console, "Run this plan?", ANSWERS)


# Answers accepted beside each choice's name and first letter.
_SYNONYMS = {"approve": ("y", "yes"), "reject": ("n", "no")}


def ask(console: Console, question: str, choices: tuple[str, ...]) -> str:
    """Ask until the answer names one of `choices` (or its first letter); an empty
    answer asks again, so Enter alone never runs nor discards a plan. EOFError on Ctrl-D."""
    options = ", ".join(f"[{choice[0]}]{choice[1:]}" for choice in choices)
    prompt = Text(f"{question} {options}: ")  # Text: the brackets are not rich markup
    while True:
        answer = console.input(prompt).strip().lower()
        for choice in choices:
            if answer in (choice, choice[0], *_SYNONYMS.get(choice, ())):
                return choice
        console.print(f"Answer {' or '.join(choices)}.")


class EditorError(RuntimeError):
    """The editor could not be started or did not save the plan."""


def editor_command() -> list[str] | None:
    """$VISUAL, then $EDITOR (split like a shell would), then nano or vi if installed."""
    for name in ("VISUAL", "EDITOR"):
        value = env(name)
        if value:
            try:
                return shlex.split(value)
            except ValueError as error:
                raise EditorError(f"${name} cannot be read as a command: {error}") from None
    installed = next(filter(None, map(shutil.which, ("nano", "vi"))), None)
    return [installed] if installed else None


def edit_in_editor(text: str) -> str:
    """Open `text` in the person's editor in a private temporary file; return what they
    saved. EditorError when no editor can run or it exits with an error."""
    command = editor_command()
    if not command:
        raise EditorError("no editor found: set $VISUAL or $EDITOR (e.g. export EDITOR=nano)")
    handle, path = tempfile.mkstemp(prefix="shopping-plan-", suffix=".toml")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            done = subprocess.run([*command, path], check=False)
        except OSError as error:
            raise EditorError(
                f"cannot start the editor {command[0]!r} ({error.strerror}): "
                "set $VISUAL or $EDITOR to one that is installed"
            ) from None
        if done.returncode != 0:
            raise EditorError(f"the editor exited with status {done.returncode}; no edit made")
        saved = _read_saved_plan(path)
        if len(saved) > MAX_EDIT_CHARS:
            raise EditorError(f"the saved file is over {MAX_EDIT_CHARS:,} characters; no edit made")
        return saved
    finally:
        # The editor may have removed the file, or left a folder in its place: not ours.
        with contextlib.suppress(OSError):
            os.unlink(path)


def _read_saved_plan(path: str) -> str:
    """What the editor left at `path`. EditorError when it removed the file or put
    something else there: opened without blocking, since a FIFO would wait for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise EditorError(
            f"the editor removed the plan file {path}; no edit made, the plan is unchanged"
        ) from None
    except OSError as error:
        raise EditorError(
            f"cannot read the plan file {path} ({error.strerror}); no edit made"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EditorError(f"the editor left something other than a file at {path}; no edit made")
    with os.fdopen(fd, encoding="utf-8", errors="replace") as file:
        return file.read(MAX_EDIT_CHARS + 1)
