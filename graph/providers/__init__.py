"""LLM providers: the registry, one module per provider family, retries and error wording,
the deadline transport, and secret masking in a module of its own.

Only the errors a provider fails a run with are imported here (from the light `base`), so
`graph.providers.secrets` stays as light as it looks.
"""

from graph.providers.base import ProviderConfigError, ProviderFailed

USER_ERRORS = (ProviderConfigError, ProviderFailed)
