"""Secret masking: configured keys, passwords inside configured URLs, and anything shaped
like an OpenAI key never reach a message, a log or a checkpoint.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlsplit

from catalog.paths import redact_url
from graph.providers.base import env

# Environment variables whose values must never appear in a message.
SECRET_ENV_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")
# Environment variables holding URLs whose credentials (user:password@) must not either.
SECRET_URL_ENV_VARS = ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "CATALOG_URL", "CHECKPOINT_URL")


def _configured_secrets() -> list[str]:
    secrets = [value for name in SECRET_ENV_VARS if (value := env(name))]
    for name in SECRET_URL_ENV_VARS:
        url = env(name)
        try:
            parts = urlsplit(url) if url else None
        except ValueError:
            parts = None
        if parts is not None and parts.password:
            # As written, and percent-decoded (as a client may print it).
            secrets += [parts.password, unquote(parts.password)]
    return [secret for secret in secrets if len(secret) >= 6]


def redact_secrets(text: str) -> str:
    """`text` with the configured API keys, the passwords inside configured URLs, the
    credentials of any URL in it, and anything shaped like an OpenAI key masked."""
    for secret in sorted(_configured_secrets(), key=len, reverse=True):
        text = text.replace(secret, "***")
    return re.sub(r"\bsk-[A-Za-z0-9_\-]{8,}", "sk-***", redact_url(text))


def redact_tree(value: Any) -> Any:
    """`value` (model output as plain data: dicts, lists, strings) with secrets masked."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    return value
