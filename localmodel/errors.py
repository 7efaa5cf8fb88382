"""The errors of the local-model runtime, in USER_ERRORS as every package names its own."""

from __future__ import annotations


class LocalModelError(RuntimeError):
    """The local model cannot be assembled or served; the message says what to do."""

    # The exit code a CLI ends with (catalog.exits, which this plain library may not
    # import): 1, a runtime failure; test_cli_conventions checks the two agree.
    exit_code = 1


class LocalModelSettingError(LocalModelError):
    """A setting of the local model (its name or file, a mode, the keep-alive time) cannot
    be used as given."""

    exit_code = 2  # bad input (catalog.exits.EXIT_BAD_INPUT)


USER_ERRORS = (LocalModelError,)
