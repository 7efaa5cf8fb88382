"""Catalog file loaders: project formats, DummyJSON, WebShop and their error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_file

from catalog import CatalogError, Product, load_products
from catalog.loaders import detect_format

SAMPLE = [
    Product(
        id="a1",
        title="Camera Strap",
        description="Leather, with rings",
        category="cameras-photography",
        price=19.5,
        rating=4.5,
        brand="Strapworks",
        tags=["strap", "gift"],
    ),
    Product(id="a2", title="Tripod", category="cameras-photography", price=80, rating=None),
    Product(
        id="a3",
        title='Book "Light"',
        description="A book, about light; with a comma",
        category="books",
        price=0,
        tags=[],
    ),
]
CSV_HEADER = "id,title,description,category,price,rating,brand,tags\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_round_trip(tmp_path: Path) -> None:
    text = "\n".join(p.model_dump_json() for p in SAMPLE) + "\n\n"
    assert load_products(write(tmp_path, "p.jsonl", text)) == SAMPLE


def test_json_list_and_wrapped_round_trip(tmp_path: Path) -> None:
    items = [p.model_dump() for p in SAMPLE]
    assert load_products(write(tmp_path, "p.json", json.dumps(items))) == SAMPLE
    wrapped = write(tmp_path, "w.json", json.dumps({"products": items}))
    assert load_products(wrapped) == SAMPLE
    assert load_products(wrapped, format="json") == SAMPLE


def test_csv_round_trip(tmp_path: Path) -> None:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_HEADER.strip().split(","))
    for p in SAMPLE:
        writer.writerow(
            [
                p.id,
                p.title,
                p.description,
                p.category,
                p.price,
                p.rating or "",
                p.brand or "",
                "|".join(p.tags),
            ]
        )
    assert load_products(write(tmp_path, "p.csv", buffer.getvalue())) == SAMPLE


def test_csv_minimal_columns_and_slugging(tmp_path: Path) -> None:
    path = write(tmp_path, "m.csv", "id,title,category,price\nx,Thing,Home & Office,3\n")
    [product] = load_products(path)
    assert product.category == "home-office"
    assert product.rating is None and product.tags == []


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c","price":1}\n{"id": "b",\n',
            "bad.jsonl line 2: malformed JSON",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c","price":1}\n\n[1, 2]\n',
            "bad.jsonl line 3: expected a JSON object",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c"}\n',
            "bad.jsonl line 1: missing required field 'price'",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"","category":"c","price":1}\n',
            "bad.jsonl line 1: title: must be a non-empty string",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c","price":-3}\n',
            "bad.jsonl line 1: price must be a number >= 0, got -3",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c","price":"cheap"}\n',
            "bad.jsonl line 1: price must be a number >= 0, got 'cheap'",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"c","price":1,"rating":7}\n',
            "bad.jsonl line 1: rating must be a number between 0 and 5, got 7",
        ),
        (
            "bad.jsonl",
            '{"id":"a","title":"t","category":"!!","price":1}\n',
            "bad.jsonl line 1: category must contain a letter or digit",
        ),
        (
            "bad.json",
            '[{"id":"a","title":"t","category":"c","price":1},\n {"id":"b"',
            "bad.json line 2: malformed JSON",
        ),
        (
            "bad.json",
            '[{"id":"a","title":"t","category":"c","price":1}, {"id":"b","title":"t"}]',
            "bad.json record 2: missing required field 'category'",
        ),
        ("bad.json", '{"items": []}', "bad.json: expected a JSON list of products"),
        (
            "bad.csv",
            CSV_HEADER + "a,t,,c,1,,,\nb,t,,c,-3,,,\n",
            "bad.csv line 3: price must be a number >= 0, got '-3'",
        ),
        (
            "bad.csv",
            CSV_HEADER + "a,t,,c,1,,,\nb,t,,c,abc,,,\n",
            "bad.csv line 3: price must be a number >= 0, got 'abc'",
        ),
        (
            "bad.csv",
            CSV_HEADER + "a,t,,c,1,,,,extra\n",
            "bad.csv line 2: expected 8 columns, got 9",
        ),
        ("bad.csv", CSV_HEADER + "a,t,,c\n", "bad.csv line 2: expected 8 columns, got 4"),
        ("bad.csv", "id,title,price\na,t,1\n", "bad.csv line 1: CSV header lacks required column"),
        ("bad.csv", CSV_HEADER + 'a,"unterminated,,c,1,,,\n', "bad.csv line"),
        ("bad.csv", "", "bad.csv line 1: empty CSV file"),
    ],
)
def test_malformed_files_name_file_and_line(
    tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(CatalogError) as info:
        load_products(path)
    message = str(info.value)
    assert fragment in message, message
    assert "kinds" not in message  # worked out from the fields named: never a problem of its own
    assert str(path) in message
    assert info.value.path == path


@pytest.mark.parametrize("ext", ["jsonl", "csv", "json"])
def test_duplicate_ids(tmp_path: Path, ext: str) -> None:
    rows = [{"id": "dup", "title": "t", "category": "c", "price": 1}] * 2
    if ext == "jsonl":
        text, where = "\n".join(json.dumps(r) for r in rows), "line 2"
    elif ext == "json":
        text, where = json.dumps(rows), "record 2"
    else:
        text, where = "id,title,category,price\ndup,t,c,1\ndup,t,c,1\n", "line 3"
    with pytest.raises(CatalogError, match=rf"{where}: duplicate id 'dup' \(first seen at"):
        load_products(write(tmp_path, f"d.{ext}", text))


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="file not found"):
        load_products(tmp_path / "nope.jsonl")
    with pytest.raises(CatalogError, match="is a directory"):
        load_products(tmp_path)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"title": "caf\xe9"}\n')
    with pytest.raises(CatalogError, match="not valid UTF-8"):
        load_products(bad)
    with pytest.raises(CatalogError, match="unknown format"):
        load_products(bad, format="xml")


def test_detect_format_by_content(tmp_path: Path) -> None:
    row = '{"id":"%s","title":"t","category":"c","price":1}\n'
    jsonl = row % "a" + row % "b"
    assert detect_format(Path("x.json"), jsonl) == "jsonl"
    assert detect_format(Path("x.txt"), jsonl) == "jsonl"
    assert detect_format(Path("x"), "[]") == "json"
    assert detect_format(Path("x.data"), "id,title\n") == "csv"
    dummy = json.dumps({"products": [{"id": 1, "thumbnail": "t"}]})
    assert detect_format(Path("x.json"), dummy) == "dummyjson"
    assert detect_format(Path("x.json"), json.dumps([{"id": 1, "stock": 3}])) == "dummyjson"
    webshop = json.dumps({"id": "B0", "product": {"pricing": [1.0]}}) + "\n"
    assert detect_format(Path("x.jsonl"), webshop) == "webshop"


def test_webshop_shapes(tmp_path: Path) -> None:
    line = {
        "id": "B000TEST",
        "contents": "...",
        "product": {
            "name": "Trail Shoe",
            "full_description": "Grippy.",
            "small_description": "One bullet",
            "pricing": ["$12.99", "$15,000.00"],
            "product_category": "Sports & Outdoors \u203a Running",
            "average_rating": "N.A.",
            "Attributes": ["waterproof"],
            "options": {"size": ["8", "9"]},
            "asin": "B000TEST",
            "category": "fashion",
        },
    }
    [p] = load_products(write(tmp_path, "w.jsonl", json.dumps(line) + "\n"))
    assert p.price == 12.99 and p.rating is None
    assert p.category == "sports-outdoors"
    assert p.description == "Grippy. One bullet"
    assert p.tags == ["waterproof", "Sports & Outdoors \u203a Running"]
    assert p.options == {"size": ["8", "9"]}
    line["product"]["pricing"] = []
    with pytest.raises(CatalogError, match=r"w2.jsonl line 1: .*pricing"):
        load_products(write(tmp_path, "w2.jsonl", json.dumps(line) + "\n"), format="webshop")


def test_dummyjson_real_file() -> None:
    dummyjson = shared_file("dummyjson", "products.json")
    products = load_products(dummyjson)
    assert len(products) == 194
    mascara = {p.id: p for p in products}["1"]
    assert mascara.title == "Essence Mascara Lash Princess"
    assert mascara.category == "beauty"
    assert mascara.price == 9.99
    assert mascara.rating == 2.56
    assert mascara.brand == "Essence"
    assert mascara.tags == ["beauty", "mascara"]
    assert any(p.brand is None for p in products)  # brand may be absent
    assert load_products(dummyjson, format="dummyjson") == products


def test_webshop_real_file() -> None:
    products = load_products(shared_file("webshop", "products_100.jsonl"))
    assert len(products) == 100
    by_id = {p.id: p for p in products}
    table = by_id["B06Y3VLDFB"]
    assert table.title.startswith("Vhomes Lights Reclaimed Wood Console Table")
    assert table.price == 877.8
    assert table.rating is None  # average_rating was ""
    assert table.category == "home-kitchen"
    assert "console table" in table.tags
    assert any("Sofa & Console Tables" in t for t in table.tags)
    dress = by_id["B08ZRR3DZT"]
    assert dress.price == 19.99  # min of [19.99, 27.99]
    assert dress.rating == 3.9
    assert dress.options["size"][0] == "x-small"
    assert "khaki" in dress.options["color"]


def _delimited(delimiter: str) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(CSV_HEADER.strip().split(","))
    for p in SAMPLE:
        row = [p.id, p.title, p.description, p.category, p.price, p.rating or "", p.brand or ""]
        writer.writerow([*row, "|".join(p.tags)])
    return buffer.getvalue()


def test_tsv_is_read_with_a_tab_delimiter(tmp_path: Path) -> None:
    # Commas inside cells ("A book, about light; with a comma") stay in their cell.
    tsv = write(tmp_path, "p.tsv", _delimited("\t"))
    assert detect_format(tsv, tsv.read_text()) == "tsv"
    assert load_products(tsv) == SAMPLE
    assert load_products(write(tmp_path, "p.txt", _delimited("\t")), format="tsv") == SAMPLE


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("tabs.csv", _delimited("\t"), "the header looks TSV: pass --format tsv"),
        ("commas.tsv", _delimited(","), "the header looks CSV: pass --format csv"),
    ],
)
def test_a_file_in_the_other_delimiter_is_named(
    tmp_path: Path, name: str, text: str, words: str
) -> None:
    with pytest.raises(CatalogError, match=words):
        load_products(write(tmp_path, name, text))


@pytest.mark.parametrize(
    ("header", "column", "where"),
    [
        ("id,title,category,price,price", "price", "columns 4 and 5"),
        ("id,title,category,price,title", "title", "columns 2 and 5"),
        ("id,title,category,price,Brand,brand", "brand", "columns 5 and 6"),
        ("id,title,category,price,extra, extra", "extra", "columns 5 and 6"),
    ],
)
def test_a_repeated_csv_column_is_refused(
    tmp_path: Path, header: str, column: str, where: str
) -> None:
    cells = header.count(",") + 1
    row = ",".join(["a1", "Strap", "c", "5"] + ["9"] * (cells - 4))
    for name, text in (("p.csv", f"{header}\n{row}\n"), ("p.tsv", f"{header}\n{row}\n")):
        text = text.replace(",", "\t") if name.endswith(".tsv") else text
        with pytest.raises(CatalogError) as raised:
            load_products(write(tmp_path, name, text))
        message = str(raised.value)
        assert f"repeats column {column!r}" in message.lower() and where in message, message
        assert name in message and "line 1" in message, message
