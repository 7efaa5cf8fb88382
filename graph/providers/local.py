"""The embedded local model as a provider: one `LocalServer` per model for this process,
a lease on a warm server or a server it owns, given up when a session ends.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from catalog.paths import data_dir, env
from graph.providers import openai_api
from graph.providers.base import (
    LOCAL_TIMEOUT_S,
    ClientSettings,
    Fault,
    Provider,
    ProviderConfigError,
    ProviderFailed,
)
from localmodel.errors import LocalModelError, LocalModelSettingError
from localmodel.server import LocalServer
from localmodel.warm import open_server
from localmodel.weights import DEFAULT_LOCAL_MODEL, local_extra_installed

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def build_local(
    model: str, max_output_tokens: int, base_url: str | None, client: ClientSettings
) -> BaseChatModel:
    """The embedded model: a warm llama.cpp server (reused, or started to stay up for
    LOCAL_MODEL_KEEP_ALIVE), or with a keep-alive of 0 one started for this process;
    unless `base_url` names one already running."""
    api_key = None
    if base_url is None:
        try:
            server = _local_server(model)
        # In the providers' terms, as for any provider: a setting that cannot be used, or
        # a server that could not be made ready (not installed, no disk space, no start).
        except LocalModelSettingError as error:
            raise ProviderConfigError(str(error)) from error
        except LocalModelError as error:
            raise ProviderFailed(str(error)) from error
        base_url, model, api_key = server.base_url, server.model_alias, server.api_key
    return openai_api.self_hosted(model, max_output_tokens, base_url, client, api_key)


# The local servers this process uses, per model: leases on warm servers, or servers it
# owns (keep-alive 0). A session gives them up when its run ends (through `Provider.stop`),
# and the process at exit.
_local_servers: dict[str, LocalServer] = {}
_local_lock = threading.Lock()


def _local_server(model: str) -> LocalServer:
    with _local_lock:
        server = _local_servers.get(model)
        if server is None:
            server = open_server(model, data_dir=data_dir())
            _local_servers[model] = server
            atexit.register(stop_local_servers)
        return server


def lost_local_server(error: BaseException) -> str | None:
    """The exit report of a local server this process uses that stopped on its own (it
    crashed or was killed), when `error` is a lost or refused connection (what a call to
    a dead server fails with); None otherwise."""
    if not _local_servers:
        return None
    # Imported here: httpx and openai cost ~0.3 s of start-up, and the CLI's --help and
    # --list read the registry that imports this module.
    import httpx
    import openai

    if not isinstance(error, openai.APIConnectionError | httpx.TransportError):
        return None
    with _local_lock:
        servers = list(_local_servers.values())
    return next(filter(None, (server.exit_report(grace_s=0.5) for server in servers)), None)


def read_fault(error: BaseException) -> Fault | None:
    """The local family's reading of a failed call: one that lost its server because the
    server died is named by the server's exit report, and not retried (the process is
    gone: a retry would only be refused again); any other, the server speaking the OpenAI
    API, the OpenAI family reads."""
    report = lost_local_server(error)
    return Fault(report) if report else openai_api.read_fault(error)


def stop_local_servers() -> None:
    """Give up every local server of this process: a lease leaves its warm server up for
    the next run (until idle), an owned server stops."""
    with _local_lock:
        servers = list(_local_servers.values())
        _local_servers.clear()
    for server in servers:
        server.release()


LOCAL = Provider(
    name="local",
    env_vars=("LOCAL_MODEL", "OPENAI_API_KEY"),
    configured=local_extra_installed,
    default_model=lambda: env("LOCAL_MODEL") or DEFAULT_LOCAL_MODEL,
    structured_output="function_calling",
    structured_output_overridable=True,
    timeout_s=LOCAL_TIMEOUT_S,
    factory=build_local,
    fault=read_fault,
    stop=stop_local_servers,
)
