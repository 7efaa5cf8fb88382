"""Meaning by a semantic match: a plain library, with no graph, catalog, LangGraph or LangChain.

- :mod:`meaning.model`: :class:`Embedder`, texts to unit vectors by a multilingual sentence
  encoder shipped in a PyPI wheel (offline, numpy only), loaded on first use;
- :mod:`meaning.index`: :class:`SemanticIndex`, the nearest keyed texts to a text, cached
  in a folder the caller names under a version the caller gives (the catalog's hash).
"""

from meaning.index import SemanticIndex
from meaning.model import USER_ERRORS, Embedder, MeaningUnavailable

__all__ = ["USER_ERRORS", "Embedder", "MeaningUnavailable", "SemanticIndex"]
