"""Typed errors raised by the catalog package."""

from __future__ import annotations

from pathlib import Path

from catalog.exits import EXIT_BAD_INPUT, EXIT_FAILED


class CatalogError(Exception):
    """A catalog file or index could not be read, validated or stored.

    ``path`` names the offending file or directory and ``location`` the line or
    record inside it (when known), so callers can report precisely without
    parsing the message.
    """

    # The catalog given (a file, an index, a table) cannot be used as it is.
    exit_code = EXIT_BAD_INPUT

    def __init__(
        self, message: str, *, path: Path | str | None = None, location: str | None = None
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.location = location
        prefix = ""
        if path is not None:
            prefix = f"{path} {location}: " if location else f"{path}: "
        super().__init__(prefix + message)


class CatalogUnavailable(CatalogError):
    """The catalog's database cannot be reached or loaded, or its index cannot be read,
    built or published: the catalog given may be fine, and the same command may work
    later."""

    exit_code = EXIT_FAILED


class CatalogQueryError(ValueError):
    """Invalid search arguments; ``argument`` names the offending parameter."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, argument: str, message: str) -> None:
        self.argument = argument
        super().__init__(f"{argument}: {message}")


# What the catalog fails with that a person can act on (the message says what to fix).
USER_ERRORS = (CatalogError, CatalogQueryError)
