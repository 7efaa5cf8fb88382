"""``python -m catalog``: load catalog files, search and list categories from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from catalog.errors import CatalogError, CatalogQueryError
from catalog.exits import (
    EXIT_BUG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    StdoutUnwritable,
    exit_code_of,
    stdout_refusals_in_one_line,
)
from catalog.loaders import FORMATS
from catalog.models import MAX_LIMIT, money
from catalog.paths import catalog_url_from_env, default_index_dir, keep_data_private
from catalog.terminal import (
    ERROR_DISPLAY_CHARS,
    STDOUT,
    command_line_text,
    survive_any_locale,
    terminal_console,
    terminal_markup,
    terminal_text,
)
from catalog.validation import SearchArgs
from catalog.version import add_version_option

if TYPE_CHECKING:
    from catalog.backend import CatalogBackend
    from catalog.models import ProductHit

EXIT_CODES_HELP = """exit codes:
  0    done
  1    a runtime failure: the catalog's database or index could not be reached or read
  2    bad arguments or input: a catalog file, index or search that cannot be used
  70   a bug (a traceback is printed)
  130  interrupted (Ctrl-C); nothing was changed"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m catalog",
        description="Manage and search the product catalog.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    add_version_option(parser)
    commands = parser.add_subparsers(dest="command", required=True)

    # Options every command takes (--debug also after the command).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--index-dir", type=Path, help=f"index directory (default: {default_index_dir()})"
    )
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    searching = argparse.ArgumentParser(add_help=False, parents=[common])
    searching.add_argument(
        "--catalog", type=Path, help="catalog file to search (indexed once, then cached)"
    )

    load = commands.add_parser(
        "load", parents=[common], help="index a catalog file, replacing the active index"
    )
    load.add_argument("file", type=Path, help="catalog file (JSONL, JSON or CSV)")
    load.add_argument(
        "--format", choices=FORMATS, default="auto", help="the file's format (default: auto)"
    )

    search = commands.add_parser("search", parents=[searching], help="search products")
    search.add_argument("query", help="words to look for (may be empty)")
    search.add_argument("--category", help="only this category slug (see `categories`)")
    search.add_argument("--min-price", type=float, help="lowest price, in dollars")
    search.add_argument("--max-price", type=float, help="highest price, in dollars")
    search.add_argument("--min-rating", type=float, help="lowest rating (0-5)")
    search.add_argument("--limit", type=int, default=10, help=f"1..{MAX_LIMIT} (default 10)")
    search.add_argument("--json", action="store_true", help="print results as JSON")

    categories = commands.add_parser("categories", parents=[searching], help="list category slugs")
    categories.add_argument("--json", action="store_true", help="print as a JSON list")
    return parser


def _open(args: argparse.Namespace) -> CatalogBackend:
    # The index engine loads only when a command needs it, so --help stays fast.
    from catalog.index import Catalog
    from catalog.store import open_catalog

    if args.catalog is None and args.index_dir is not None:
        return Catalog.open(args.index_dir)  # an explicit index directory wins, as in open_catalog
    # With CATALOG_URL set, the default catalog and a catalog file are served from
    # PostgreSQL, as for a run (docs/scaling.md); unset, the embedded index.
    return open_catalog(args.catalog, args.index_dir, url=catalog_url_from_env())


def _run(args: argparse.Namespace, out: Console) -> None:
    if args.command == "load":
        from catalog.store import load_catalog

        index_dir = args.index_dir or default_index_dir()
        count = load_catalog(args.file, index_dir, args.format)
        out.print(f"Indexed [bold]{count}[/bold] products into {terminal_markup(index_dir)}")
        return
    catalog = _open(args)
    if args.command == "categories":
        names = catalog.categories()
        if args.json:
            print(json.dumps(names), file=STDOUT)
        else:
            for name in names:
                out.print(terminal_text(name))
        return
    hits = catalog.search(
        SearchArgs(
            args.query,
            category=args.category,
            min_price=args.min_price,
            max_price=args.max_price,
            min_rating=args.min_rating,
            limit=args.limit,
        )
    )
    if args.json:
        # Plain print: rich would wrap long lines and break the JSON.
        found = [{**h.product.model_dump(), "score": h.score} for h in hits]
        print(json.dumps(found, indent=1), file=STDOUT)
        return
    print_hits(out, args.query, hits)


def print_hits(out: Console, query: str, hits: list[ProductHit]) -> None:
    """The search results table. Catalog text and the query are data: shown as Text
    through catalog.terminal, never read as markup."""
    title = Text(f"{len(hits)} result(s) for ") + terminal_text(repr(query))
    table = Table(title=title)
    for column in ("id", "title", "category"):
        table.add_column(column)
    for column in ("price", "rating", "score"):
        table.add_column(column, justify="right")
    for hit in hits:
        p = hit.product
        table.add_row(
            terminal_text(p.id, 80),
            terminal_text(p.title),
            terminal_text(p.category, 80),
            money(p.price),
            "-" if p.rating is None else f"{p.rating:.1f}",
            f"{hit.score:.2f}",
        )
    out.print(table)


@stdout_refusals_in_one_line
def main(argv: list[str] | None = None) -> int:
    survive_any_locale()
    arguments = argv if argv is not None else sys.argv[1:]
    args = _parser().parse_args([command_line_text(argument) for argument in arguments])
    keep_data_private()  # the index caches are private like the runs
    out = terminal_console()
    err = terminal_console(stderr=True)
    try:
        _run(args, out)
    except (BrokenPipeError, StdoutUnwritable):
        raise  # stdout refused a write: one line at most (stdout_refusals_in_one_line)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM during a build: its folder is removed
        err.print("[yellow]interrupted.[/] nothing was changed", soft_wrap=True)
        return EXIT_INTERRUPTED
    except (CatalogError, CatalogQueryError) as exc:
        # Bad input or a failure, by the error's type; --debug changes what is shown only.
        if args.debug:
            traceback.print_exc()
        else:
            message = terminal_markup(exc, ERROR_DISPLAY_CHARS, keep_newlines=True)
            err.print(f"[bold red]error:[/bold red] [red]{message}[/red]", soft_wrap=True)
        return exit_code_of(exc)
    except Exception:
        # A bug: its traceback, and a code of its own (Python's 1 would read as a failure).
        traceback.print_exc()
        return EXIT_BUG
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
