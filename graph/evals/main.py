"""`python -m graph.eval`: parse the arguments, check them all before the first goal runs,
and hand over to the mode they name.

    python -m graph.eval GOALS.json --catalog CATALOG [--provider ...] [--tool-mode ...]
                         [--limit N] [--out report.json]
    python -m graph.eval --compare A.json B.json
    python -m graph.eval REQUESTS.jsonl --limits LABELS.json [--provider ...] [--out R.json]
    python -m graph.eval BUNDLES.json --bundles [--check] [--catalog PATH] [--out R.json]
    python -m graph.eval FOLLOW_UPS.json --follow-ups [--provider ...] [--out R.json]
    python -m graph.eval REVISIONS.json --revisions [--provider ...] [--out R.json]
    python -m graph.eval REQUESTS.json --open-ended [--catalog PATH] [--out R.json]

The --limits mode plans requests that have no known answer and scores each plan's
filters against the limits labelled for it (graph/evals/limits.py); nothing is searched.
The --bundles mode runs requests for several items under one total budget and scores the
picks against the best bundle the catalog holds (graph/evals/bundles.py); --check only
prints that brute force, with no model. The --open-ended mode runs gifts, hobbies and
occasions, planned as the single best of a few kinds, and scores the kinds planned, the
pick's category, the budget, what is lost and dominated picks (graph/evals/open_ended.py).

Each goal is one checkpointed thread, so a rerun with the same --label resumes where the
last one stopped, if it runs the same goals on the same catalog, provider and model; a
goal whose saved run differs runs afresh on a thread of its own (graph/evals/reruns.py).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from catalog import CatalogError, load_products
from catalog.exits import (
    EXIT_BAD_INPUT,
    EXIT_BUG,
    StdoutUnwritable,
    exit_code_of,
    stdout_refusals_in_one_line,
)
from catalog.paths import keep_data_private
from catalog.terminal import STDOUT, clean_text
from catalog.version import add_version_option
from graph.builder import build_graph
from graph.context import Context, SettingsError, load_env_file
from graph.errors import file_problem
from graph.evals.bundle_sets import check_kinds, load_bundles
from graph.evals.bundles import check_text, run_bundles_eval
from graph.evals.bundles import markdown_table as bundles_table
from graph.evals.driver import EvalReport, approved_context, prepared, show_and_save
from graph.evals.follow_ups import compare_table as compare_follow_ups
from graph.evals.follow_ups import load_cases, run_follow_ups_eval, run_revisions_eval
from graph.evals.follow_ups import markdown_table as follow_ups_table
from graph.evals.inputs import EvalInputError, check_limit, check_out, read_json
from graph.evals.limits import load_labels, load_requests, run_limits_eval
from graph.evals.limits import markdown_table as limits_table
from graph.evals.open_ended import check_categories, load_open_ended, run_open_ended_eval
from graph.evals.open_ended import markdown_table as open_ended_table
from graph.evals.webshop import load_goals, markdown_table, run_eval
from graph.providers.base import ProviderConfigError, ProviderFailed
from graph.providers.models import chat_model_session
from graph.providers.registry import PROVIDERS
from graph.providers.secrets import redact_secrets
from graph.runs.checkpoint import CheckpointStoreError, open_checkpointer
from localmodel.errors import LocalModelError

# What a user can fix from the message alone: one `error:` line, no traceback, and the
# exit code each names (bad input or a runtime failure, docs/scripting.md).
USER_ERRORS = (
    EvalInputError,
    CatalogError,
    CheckpointStoreError,
    LocalModelError,
    ProviderConfigError,
    ProviderFailed,
    SettingsError,
)

EXIT_CODES_HELP = """exit codes:
  0    done (a report written or compared)
  1    a runtime failure: the model server or a database failed or could not be reached
  2    bad arguments or input: a goals, labels or report file, a setting, a path
  70   a bug (a traceback is printed)
  130  interrupted (Ctrl-C); a rerun with the same --label resumes"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graph.eval",
        # The docstring's usage lines and modes, under a first line for the shopper.
        description="Score the planner on a file of goals, or compare two reports.\n\n"
        + (__doc__ or "").split("\n\n", 1)[1],
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "goals",
        nargs="?",
        type=Path,
        help="goals JSON (WebShop format), or the requests, bundles or follow-ups of a mode",
    )
    parser.add_argument("--catalog", type=Path, help="catalog file the goals refer to")
    parser.add_argument(
        "--provider",
        choices=list(PROVIDERS),
        help="the LLM provider (default: the first configured, else local)",
    )
    parser.add_argument("--model", help="model or deployment name (provider default if unset)")
    parser.add_argument(
        "--tool-mode",
        choices=["direct", "llm"],
        default="direct",
        help="direct (default): searches run the plan's query; llm: the model picks them",
    )
    parser.add_argument("--limit", type=int, help="run only the first N goals (N >= 1)")
    parser.add_argument("--label", help="run name (default: provider-model-mode)")
    parser.add_argument("--out", type=Path, help="write the JSON report here (+ .md)")
    parser.add_argument("--db", type=Path, help="checkpoint database (default: per-user)")
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("A", "B"),
        help="compare two saved JSON reports, goal by goal",
    )
    parser.add_argument(
        "--limits", type=Path, metavar="LABELS", help="score plans' filters against these labels"
    )
    parser.add_argument("--bundles", action="store_true", help="GOALS is a bundle file")
    parser.add_argument("--check", action="store_true", help="--bundles: brute force only")
    parser.add_argument("--follow-ups", action="store_true", help="GOALS is a follow-up file")
    parser.add_argument(
        "--revisions", action="store_true", help="GOALS is a file of plans changed in words"
    )
    parser.add_argument(
        "--open-ended", action="store_true", help="GOALS is an open-ended (gift) request file"
    )
    add_version_option(parser)
    return parser


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.compare:
        return args
    if args.limits is not None and args.goals is None:
        parser.error("give REQUESTS.jsonl with --limits")
    if args.check and not args.bundles:
        parser.error("--check goes with --bundles")
    if args.bundles and args.goals is None:
        parser.error("give BUNDLES.json with --bundles")
    if args.follow_ups and args.goals is None:
        parser.error("give FOLLOW_UPS.json with --follow-ups")
    if args.revisions and args.goals is None:
        parser.error("give REVISIONS.json with --revisions")
    if args.open_ended and args.goals is None:
        parser.error("give REQUESTS.json with --open-ended")
    if args.follow_ups or args.revisions or args.open_ended:
        return args
    if args.limits is None and not args.bundles and (args.goals is None or args.catalog is None):
        parser.error("give GOALS.json and --catalog (or --compare A.json B.json)")
    return args


@stdout_refusals_in_one_line
def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    try:
        load_env_file()  # .env of the working directory configures providers; real ones win
        keep_data_private()  # the eval's runs and caches are private like the CLI's
        if args.compare:
            return _compare_main(args.compare)
        check_limit(args.limit)
        check_out(args.out, (args.goals, args.catalog, args.limits))
        return _mode_main(args)
    except (BrokenPipeError, StdoutUnwritable):
        raise  # stdout refused a write: one line (stdout_refusals_in_one_line)
    except (*USER_ERRORS, OSError) as error:
        text = str(error) if isinstance(error, USER_ERRORS) else file_problem(error)
        if text is None:
            return _bug(error)  # an OSError naming no file
        # Masked: a provider or database message may quote a key or a URL's password.
        print(f"error: {clean_text(redact_secrets(text), 2000)}", file=sys.stderr)
        # A path the system refused is the path's fault (bad input), as in the run CLI.
        return EXIT_BAD_INPUT if isinstance(error, OSError) else exit_code_of(error)
    except Exception as error:
        return _bug(error)


def _bug(error: Exception) -> int:
    """A bug: its traceback on stderr, masked, and a code of its own (Python's 1 for an
    uncaught error would read as a runtime failure)."""
    text = "".join(traceback.format_exception(error))
    sys.stderr.write(clean_text(redact_secrets(text), 200_000, keep_newlines=True) + "\n")
    return EXIT_BUG


def _compare_main(paths: list[Path]) -> int:
    reports: list[dict[str, Any]] = []
    for path in paths:
        report = read_json(path, "report")
        if not isinstance(report, dict) or not isinstance(report.get("summary"), dict):
            raise EvalInputError(f"report {path}: not an eval report (no 'summary' object)")
        reports.append(report)
    # The key naming a report's file of cases tells its kind; a WebShop report's is the default.
    tables = {
        "requests_file": limits_table,
        "bundles_file": bundles_table,
        "open_ended_file": open_ended_table,
        "follow_ups_file": compare_follow_ups,  # revisions' reports too
    }
    kind = (table for key, table in tables.items() if all(key in r for r in reports))
    print(next(kind, markdown_table)(reports), file=STDOUT)
    return 0


FULL_LABEL = "{0.provider}-{0.model}-{0.tool_mode}"  # formatted with the prepared context


def _mode_main(args: argparse.Namespace) -> int:
    """Run the mode the arguments name, its inputs read and checked before any model
    starts; print its report's table and, with --out, save the report. `run` is the mode
    with its cases bound, given the context, graph, label and --limit."""
    source, default_label = str(args.goals), FULL_LABEL
    run: Callable[..., EvalReport]
    table: Callable[[list[dict[str, Any]]], str]
    if args.limits is not None:
        requests, labels = load_requests(args.goals), load_labels(args.limits)
        run = partial(run_limits_eval, requests, labels, requests_file=source)
        context = Context(provider=args.provider, model=args.model)
        default_label, table = "limits-{0.provider}-{0.model}", limits_table
    elif args.bundles:
        bundles = load_bundles(args.goals, args.catalog)
        products = load_products(bundles.catalog)
        check_kinds(bundles.requests, products, bundles.catalog, str(bundles.path))
        if args.check:
            print(check_text(bundles, products), file=STDOUT)
            return 0
        run = partial(run_bundles_eval, bundles.requests, bundles.catalog, bundles_file=source)
        context, table = approved_context(args, bundles.catalog), bundles_table
    elif args.open_ended:
        cases = load_open_ended(args.goals, args.catalog)
        check_categories(cases.requests, load_products(cases.catalog), str(cases.path))
        run = partial(run_open_ended_eval, cases.requests, cases.catalog, open_ended_file=source)
        context, table = approved_context(args, cases.catalog), open_ended_table
    elif args.follow_ups:  # on the shipped catalog; its table has a row per case of one report
        run = partial(run_follow_ups_eval, load_cases(args.goals), follow_ups_file=source)
        context, default_label = approved_context(args), "{0.provider}-{0.model}"
        table = lambda reports: follow_ups_table(reports[0])  # noqa: E731
    elif args.revisions:  # as follow-ups are: the shipped catalog, a row per case
        revisions = load_cases(args.goals, "revisions")
        run = partial(run_revisions_eval, revisions, revisions_file=source)
        context, default_label = approved_context(args), "revisions-{0.provider}-{0.model}"
        table = lambda reports: follow_ups_table(reports[0])  # noqa: E731
    else:
        run = partial(run_eval, load_goals(args.goals), args.catalog, goals_file=source)
        context, table = approved_context(args, args.catalog), markdown_table
    # The catalog opened before a model starts (a local one takes a while): a bad one fails first.
    context = prepared(context)
    graph = build_graph(checkpointer=open_checkpointer(args.db))
    with chat_model_session(context) as context:
        label = args.label or default_label.format(context)
        report = run(context, graph, label=label, limit=args.limit)
    data = report.to_json()
    show_and_save(data, table([data]), args.out)
    return 0
