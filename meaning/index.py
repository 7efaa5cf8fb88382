"""A small semantic index: the vectors of keyed texts, the nearest keys to a text, and a
cache file keyed by a version string, so that the vectors of a catalog are made once."""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from meaning.model import Embedder

# Texts embedded per call while building, so memory stays flat on a large catalog.
BATCH = 512


class SemanticIndex:
    """Keys and their unit vectors (one row per key)."""

    def __init__(self, keys: Sequence[str], vectors: Any, embedder: Embedder) -> None:
        if len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} keys for {len(vectors)} vectors")
        self.keys = list(keys)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.embedder = embedder

    @classmethod
    def build(cls, items: Sequence[tuple[str, str]], embedder: Embedder) -> SemanticIndex:
        """The vectors of each (key, text)."""
        chunks = [
            embedder.embed([text for _, text in items[start : start + BATCH]])
            for start in range(0, len(items), BATCH)
        ]
        vectors = np.concatenate(chunks) if chunks else embedder.embed([])
        return cls([key for key, _ in items], vectors, embedder)

    @classmethod
    def cached(
        cls,
        folder: Path,
        name: str,
        version: str,
        items: Sequence[tuple[str, str]],
        embedder: Embedder,
    ) -> SemanticIndex:
        """The index saved in `folder` under `name` for this `version` (a content hash of the
        texts, say), or, when that is missing, stale or unreadable, a new one, saved there."""
        found = cls.load(folder, name, version, embedder)
        if found is None:
            found = cls.build(items, embedder)
            # A folder it may not write: the vectors serve this process all the same.
            with contextlib.suppress(OSError):
                found.save(folder, name, version)
        return found

    def save(self, folder: Path, name: str, version: str) -> None:
        """Write the index whole or not at all: readers never see half a file."""
        folder.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".npz")
        try:
            with os.fdopen(handle, "wb") as stream:
                np.savez(
                    stream,
                    keys=np.array(self.keys, dtype=np.str_),
                    vectors=self.vectors,
                    version=np.array(self._full_version(version, self.embedder)),
                )
            os.replace(scratch, _path(folder, name))
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise

    @classmethod
    def load(
        cls, folder: Path, name: str, version: str, embedder: Embedder
    ) -> SemanticIndex | None:
        """The saved index, or None when there is none for this version and model."""
        try:
            with np.load(_path(folder, name), allow_pickle=False) as saved:
                if str(saved["version"]) != cls._full_version(version, embedder):
                    return None
                keys, vectors = saved["keys"].tolist(), saved["vectors"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
            return None  # missing, cut short or not ours: built again
        if vectors.ndim != 2 or len(keys) != len(vectors):
            return None
        return cls(keys, vectors, embedder)

    @staticmethod
    def _full_version(version: str, embedder: Embedder) -> str:
        return f"{version}|{embedder.version}"

    def scores(self, query: str | Any) -> Any:
        """The cosine of the query (a text or a vector of this model) with every key."""
        vector = self.embedder.embed([query])[0] if isinstance(query, str) else query
        vector = np.asarray(vector, dtype=np.float32)
        if vector.shape != self.vectors.shape[1:]:
            raise ValueError(
                f"a query vector of shape {vector.shape}, not {self.vectors.shape[1:]}"
            )
        return self.vectors @ vector

    def nearest(self, query: str | Any, k: int = 5) -> list[tuple[str, float]]:
        """The `k` keys nearest the query, best first."""
        scores = self.scores(query)
        k = max(0, min(k, len(self.keys)))
        if k == 0:
            return []
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(self.keys[i], float(scores[i])) for i in best]


def _path(folder: Path, name: str) -> Path:
    return folder / f"{name}.npz"
