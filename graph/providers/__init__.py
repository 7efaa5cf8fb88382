"""LLM providers: the registry, one module per provider family, retries and error wording,
the deadline transport, and secret masking in a module of its own.

Nothing is imported here, so `graph.providers.secrets` stays as light as it looks.
"""
