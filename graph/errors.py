"""The base of the project's own errors, below every layer that raises one."""

from __future__ import annotations

from typing import Self


class ShoppingError(Exception):
    """An error meant for the shopper: its message says what to do. One that stopped a run
    names it (the session that ran it says so), so the message offers --resume only when
    that can work: `thread_id`, and `resumable`: True when finished steps are saved, False
    when nothing is, None when the store cannot tell."""

    thread_id: str | None = None
    resumable: bool | None = None

    def in_run(self, thread_id: str, resumable: bool | None) -> Self:
        self.thread_id, self.resumable = thread_id, resumable
        return self
