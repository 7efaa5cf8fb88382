"""Load products from the project schema (JSONL/JSON/CSV/TSV), DummyJSON and WebShop files.

Every loader reports problems as ``CatalogError`` naming the file and the line
(line-oriented formats) or record number (JSON documents), so a bad row in a
large file can be found without a debugger.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalog.errors import CatalogError
from catalog.models import MAX_PRICE, Product, shown_value
from catalog.paths import check_catalog_file

FORMATS = ("auto", "jsonl", "json", "csv", "tsv", "dummyjson", "webshop")
# The cell delimiter of each delimited format.
DELIMITERS = {"csv": ",", "tsv": "\t"}
CSV_REQUIRED = ("id", "title", "category", "price")
CSV_COLUMNS = ("id", "title", "description", "category", "price", "rating", "brand", "tags")
_PRICE_IN_TEXT = re.compile(r"\d+(?:\.\d+)?")
# WebShop joins category levels with U+203A SINGLE RIGHT-POINTING ANGLE QUOTATION MARK.
_CATEGORY_SEP = "\u203a"
_CATEGORY_SPLIT = re.compile(r"\s*\u203a\s*")

# (location such as "line 7" or "record 3", raw record) pairs flow from readers to converters.
Located = tuple[str, Any]


def _describe_validation(err: ValidationError) -> str:
    parts = []
    for item in err.errors():
        field = ".".join(str(p) for p in item["loc"]) or "record"
        if item["type"] == "value_error":
            # Our validators already phrase the message with the offending value.
            message = str(item["ctx"]["error"])
            parts.append(message if message.startswith(field) else f"{field}: {message}")
        elif item["type"] == "default_factory_not_called":
            continue  # Product.kinds, read from the fields the other errors name
        elif item["type"] == "missing":
            parts.append(f"missing required field '{field}'")
        else:
            parts.append(f"{field}: {item['msg']} (got {shown_value(item.get('input'))})")
    return "; ".join(parts)


def _read_text(path: Path) -> str:
    check_catalog_file(path)
    try:
        # utf-8-sig tolerates the BOM spreadsheet exports like to add.
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CatalogError("file not found", path=path) from None
    except IsADirectoryError:
        raise CatalogError("is a directory, expected a catalog file", path=path) from None
    except UnicodeDecodeError as exc:
        reason = f"not valid UTF-8 ({exc.reason} at byte {exc.start})"
        raise CatalogError(reason, path=path) from None
    except OSError as exc:
        raise CatalogError(f"cannot read file: {exc.strerror}", path=path) from None


def _loads(path: Path, text: str, location: str | None = None, line_offset: int = 0) -> Any:
    """json.loads, with every way it fails said as a CatalogError: malformed JSON, and
    the two hostile inputs it raises other errors for (nesting past Python's recursion
    limit, an integer over Python's 4,300-digit conversion limit)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        reason = f"malformed JSON: {exc.msg} (column {exc.colno})"
        location = f"line {exc.lineno + line_offset}"
    except RecursionError:
        reason = "JSON nested too deeply to read (over ~1,000 levels of [ or {)"
    except ValueError:
        reason = "a number with too many digits to read (over 4,300)"
    raise CatalogError(reason, path=path, location=location)


# A line and its ending, as an editor numbers lines (the last one may have no ending).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _file_lines(text: str) -> Iterator[str]:
    """The file's lines as an editor numbers them: split at \n, \r\n or \r only.
    (str.splitlines also splits at U+2028, form feeds and more, which JSON strings and
    CSV cells may hold, so its line numbers drift from the file's.) One at a time, and
    not through io.StringIO, which copies the text at 4 bytes a character (1.5 GB for a
    million products) before giving its first line."""
    return (match.group() for match in _LINE.finditer(text))


def _jsonl_records(path: Path, text: str) -> Iterator[Located]:
    for lineno, ending in enumerate(_file_lines(text), start=1):
        line = ending.rstrip("\r\n")
        if not line.strip():
            continue
        location = f"line {lineno}"
        yield location, _loads(path, line, location, line_offset=lineno - 1)


def _json_records(path: Path, document: Any) -> Iterator[Located]:
    if isinstance(document, dict) and "products" in document:
        document = document["products"]
    if not isinstance(document, list):
        raise CatalogError(
            'expected a JSON list of products or {"products": [...]}, '
            f"got {type(document).__name__}",
            path=path,
        )
    for number, record in enumerate(document, start=1):
        yield f"record {number}", record


def _check_header(path: Path, header: list[str], fmt: str) -> None:
    """Refuse a header that would silently lose data: a column given twice (the last
    cell would win), or required columns missing."""
    first_at: dict[str, int] = {}
    for number, name in enumerate(header, start=1):
        key = name.strip().casefold()
        if key in first_at:
            raise CatalogError(
                f"{fmt.upper()} header repeats column {name.strip()!r} "
                f"(columns {first_at[key]} and {number}); each column must appear once",
                path=path,
                location="line 1",
            )
        first_at[key] = number
    missing = [name for name in CSV_REQUIRED if name not in header]
    if missing:
        other = {"csv": "tsv", "tsv": "csv"}[fmt]
        hint = ""
        if len(header) == 1 and DELIMITERS[other] in header[0]:
            hint = f"; the header looks {other.upper()}: pass --format {other}"
        raise CatalogError(
            f"{fmt.upper()} header lacks required column(s) {', '.join(missing)}; "
            f"expected columns {DELIMITERS[fmt].join(CSV_COLUMNS)}{hint}",
            path=path,
            location="line 1",
        )


def _csv_records(path: Path, text: str, fmt: str = "csv") -> Iterator[Located]:
    # Line numbers pulled from the file while reading the current record, so a record
    # is named by the line it starts on (a quoted cell may span lines; blank lines skip).
    pulled: list[tuple[int, str]] = []

    def lines() -> Iterator[str]:
        for number, line in enumerate(_file_lines(text), start=1):
            pulled.append((number, line))
            yield line

    reader = csv.DictReader(lines(), delimiter=DELIMITERS[fmt], strict=True)
    kind = fmt.upper()
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise CatalogError(
            f"malformed {kind} header: {exc}", path=path, location="line 1"
        ) from None
    if not header:
        raise CatalogError(
            f"empty {kind} file, expected a header row", path=path, location="line 1"
        )
    _check_header(path, list(header), fmt)
    rows = iter(reader)
    while True:
        pulled.clear()
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            raise CatalogError(
                f"malformed {kind}: {exc}",
                path=path,
                location=f"line {_record_start(pulled)}",
            ) from None
        location = f"line {_record_start(pulled)}"
        surplus = row.pop(None, [])  # DictReader files surplus cells under the None key
        got = sum(value is not None for value in row.values()) + len(surplus)
        if got != len(header):
            raise CatalogError(
                f"expected {len(header)} columns, got {got}", path=path, location=location
            )
        record: dict[str, Any] = {k: v for k, v in row.items() if k in CSV_COLUMNS}
        record["tags"] = [t for t in (record.get("tags") or "").split("|") if t.strip()]
        if not (record.get("rating") or "").strip():
            record["rating"] = None
        yield location, record


def _record_start(pulled: list[tuple[int, str]]) -> int:
    """The first non-blank line among those read for one CSV record."""
    last = pulled[-1][0] if pulled else 1
    return next((number for number, line in pulled if line.strip()), last)


def _dummyjson_to_product(record: dict[str, Any]) -> dict[str, Any]:
    # DummyJSON names its fields as the project's schema does.
    converted = {field: record.get(field) for field in CSV_COLUMNS}
    converted["description"] = converted["description"] or ""
    converted["tags"] = converted["tags"] or []
    if isinstance(converted["id"], int) and not isinstance(converted["id"], bool):
        converted["id"] = str(converted["id"])
    return {k: v for k, v in converted.items() if v is not None}


def _webshop_price(product: dict[str, Any]) -> Any:
    """Cheapest listed price: WebShop lists one price or a [low, high] range, numbers or "$x"."""
    prices: list[float] = []
    raw = product.get("pricing")
    candidates = raw if isinstance(raw, list) else [raw] if raw not in (None, "") else []
    if not candidates and product.get("Price"):
        candidates = [product["Price"]]
    for item in candidates:
        if isinstance(item, int | float) and not isinstance(item, bool):
            if isinstance(item, int) and abs(item) > MAX_PRICE:
                return item  # the Product validator names it (float() would overflow)
            prices.append(float(item))
        elif isinstance(item, str):
            found = _PRICE_IN_TEXT.findall(item.replace(",", ""))
            if not found:
                return item  # let the Product validator report the unparseable text
            prices.extend(float(f) for f in found)
        else:
            return item
    if not prices:
        raise ValueError("missing required field 'pricing' (no price listed)")
    return min(prices)


def _webshop_category(product: dict[str, Any]) -> tuple[str, str]:
    """Category slug and the full path text.

    We use the top level of ``product_category`` ("Home & Kitchen > Furniture > ...",
    with U+203A as the separator) because it gives a small, stable set of browsable
    categories; the leaf levels are too fine-grained to filter on, so the full path is
    kept searchable as a tag.
    Products without a path fall back to WebShop's coarse ``category`` field.
    """
    path_text = product.get("product_category") or ""
    parts = [p.strip() for p in _CATEGORY_SPLIT.split(path_text) if p.strip()]
    top = parts[0] if parts else (product.get("category") or "uncategorized")
    return top, f" {_CATEGORY_SEP} ".join(parts)


def _webshop_to_product(record: dict[str, Any]) -> dict[str, Any]:
    product = record.get("product")
    if not isinstance(product, dict):
        raise ValueError("missing required object 'product'")
    bullets = product.get("small_description") or []
    if isinstance(bullets, str):
        bullets = [bullets]
    description = " ".join(
        part.strip()
        for part in [product.get("full_description") or "", *bullets]
        if isinstance(part, str) and part.strip()
    )
    category, path_text = _webshop_category(product)
    rating = product.get("average_rating")
    if isinstance(rating, str):
        try:
            rating = float(rating)
        except ValueError:
            rating = None  # "" and "N.A." mean unrated
    tags = [t for t in product.get("Attributes") or [] if isinstance(t, str)]
    if path_text:
        tags.append(path_text)
    options = product.get("options") or {}
    if not isinstance(options, dict):
        options = {}
    return {
        "id": record.get("id") or product.get("asin"),
        "title": product.get("name") or product.get("Title"),
        "description": description,
        "category": category,
        "price": _webshop_price(product),
        "rating": rating,
        "brand": None,  # WebShop has no brand field
        "tags": tags,
        "options": {
            str(k): [str(v) for v in vs] for k, vs in options.items() if isinstance(vs, list)
        },
    }


def _first_json_line(text: str) -> Any:
    for line in _file_lines(text):
        if line.strip():
            try:
                return json.loads(line)
            except (ValueError, RecursionError):  # the reader says what is wrong
                return None
    return None


def _looks_dummyjson(document: Any) -> bool:
    items = document.get("products") if isinstance(document, dict) else document
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return False
    return "thumbnail" in items[0] or "stock" in items[0]


def _looks_webshop(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("product"), dict)
        and "pricing" in record["product"]
    )


def detect_format(path: Path, text: str) -> str:
    """Pick a format from the extension, confirmed by the content."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return suffix[1:]
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        if suffix in (".json", ".jsonl", ".ndjson"):
            return "jsonl" if suffix != ".json" else "json"  # let the parser report it
        return "csv"
    if suffix not in (".jsonl", ".ndjson"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            # Several JSON values one after another is JSONL whatever the extension says.
            if exc.msg != "Extra data":
                return "json"
        except (ValueError, RecursionError):  # too deep or too long a number: the reader says so
            return "json"
        else:
            return "dummyjson" if _looks_dummyjson(document) else "json"
    return "webshop" if _looks_webshop(_first_json_line(text)) else "jsonl"


def _records(path: Path, text: str, fmt: str) -> tuple[Iterable[Located], Any]:
    if fmt == "jsonl":
        return _jsonl_records(path, text), None
    if fmt == "webshop":
        return _jsonl_records(path, text), _webshop_to_product
    if fmt in DELIMITERS:
        return _csv_records(path, text, fmt), None
    document = _loads(path, text)
    return _json_records(path, document), (_dummyjson_to_product if fmt == "dummyjson" else None)


def iter_products(
    path: Path, format: str = "auto", *, progress: Callable[[int, int], None] | None = None
) -> Iterator[Product]:
    """Read and validate the products in ``path`` one at a time (so a large file is never
    held as a list of products); ``CatalogError`` on the first bad record, and at the end
    if there were none. ``progress(read, total)`` is told how many characters are read."""
    path = Path(path)
    if format not in FORMATS:
        raise CatalogError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    text = _read_text(path)
    fmt = detect_format(path, text) if format == "auto" else format
    records, convert = _records(path, text, fmt)
    first_seen: dict[str, str] = {}
    position = _position_of(text)
    for location, record in records:
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected a JSON object, got {type(record).__name__}")
            product = Product.model_validate(convert(record) if convert else record)
        except ValidationError as exc:
            raise CatalogError(_describe_validation(exc), path=path, location=location) from None
        except ValueError as exc:
            raise CatalogError(str(exc), path=path, location=location) from None
        if product.id in first_seen:
            raise CatalogError(
                f"duplicate id {product.id!r} (first seen at {first_seen[product.id]})",
                path=path,
                location=location,
            )
        first_seen[product.id] = location
        if progress is not None and len(first_seen) % PROGRESS_EVERY == 0:
            progress(position(location), len(text))
        yield product
    if not first_seen:
        # An empty catalog can answer no search: say so now, not after a paid plan.
        raise CatalogError("no products in the file", path=path)
    if progress is not None:
        progress(len(text), len(text))


# Products between two progress reports.
PROGRESS_EVERY = 2000


def _position_of(text: str) -> Callable[[str], int]:
    """About how far into ``text`` the record at a location ("line 7") is: its line number
    times the average line of the first MB. Exact enough for a progress bar, and free;
    JSON documents ("record 3") count as not yet read."""
    sample = min(len(text), 1 << 20)
    average = sample / (text.count("\n", 0, sample) or 1)

    def position(location: str) -> int:
        kind, _, number = location.partition(" ")
        return min(len(text), int(int(number) * average)) if kind == "line" else 0

    return position


def load_products(path: Path, format: str = "auto") -> list[Product]:
    """Read and validate every product in ``path``; ``CatalogError`` on the first bad record."""
    return list(iter_products(path, format))
