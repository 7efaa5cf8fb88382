"""Secret masking: configured keys, passwords inside configured URLs, and anything shaped
like an OpenAI key never reach a message, a log or a checkpoint.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from catalog.paths import NAMED_SECRET, env, redact_url

# Environment variables whose values must never appear in a message (PGPASSWORD: libpq
# reads the database password there).
SECRET_ENV_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "PGPASSWORD")
# Environment variables holding URLs whose credentials (user:password@) must not either.
SECRET_URL_ENV_VARS = ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "CATALOG_URL", "CHECKPOINT_URL")


def _configured_secrets() -> list[str]:
    secrets = [value for name in SECRET_ENV_VARS if (value := env(name))]
    for url in filter(None, map(env, SECRET_URL_ENV_VARS)):
        # Its password and parameters named like secrets, as written, percent-decoded (as
        # a client may print them), and cut where a parser splits a raw / or @ in one.
        userinfo = re.match(r"\w[\w+.-]*:/+[^:/@\s]*:(\S*)@", url)
        found = [userinfo[1]] if userinfo else []
        found += [value.strip("'") for _name, value in NAMED_SECRET.findall(url)]
        found += [piece for secret in found for piece in re.split("[/@]", secret)]
        secrets += found + [unquote(secret) for secret in found]
    return [secret for secret in secrets if len(secret) >= 6]


_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def redact_secrets(text: str, secrets: list[str] | None = None) -> str:
    """`text` with the configured API keys, the passwords inside configured URLs, the
    credentials of any URL in it, and anything shaped like an OpenAI key masked.
    `secrets` is _configured_secrets() when the caller has read it already."""
    for secret in secrets if secrets is not None else _longest_first(_configured_secrets()):
        text = text.replace(secret, "***")
    return _OPENAI_KEY.sub("sk-***", redact_url(text))


def _longest_first(secrets: list[str]) -> list[str]:
    return sorted(secrets, key=len, reverse=True)


def redact_tree(value: Any) -> Any:
    """`value` (model output as plain data: dicts, lists, strings) with secrets masked.
    The environment is read once for the whole tree, not once per string in it."""
    secrets = _longest_first(_configured_secrets())

    def masked(item: Any) -> Any:
        if isinstance(item, str):
            return redact_secrets(item, secrets)
        if isinstance(item, dict):
            return {key: masked(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [masked(inner) for inner in item]
        return item

    return masked(value)
