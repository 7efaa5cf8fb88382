"""The import contracts in pyproject.toml ([tool.importlinter]) hold, and they can fail.

`.ci/run` runs `lint-imports`; these tests run the same checker, then break a copy of the
tree on purpose to prove that each contract catches the import it exists for (a
`catalog -> graph`, `localmodel -> graph` or `meaning -> catalog` import, the old
`catalog.postgres -> catalog.store` cycle, a check reaching a provider, ...), naming the
offending import.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OUR_CONTRACTS = (
    "catalog-is-plain",
    "localmodel-is-plain",
    "meaning-is-plain",
    "catalog-layers",
    "localmodel-layers",
    "graph-layers",
    "providers-layers",
)
PACKAGES = ("catalog", "localmodel", "meaning", "graph")


def lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """Run `lint-imports` on the packages under `root` (not an installed copy)."""
    executable = shutil.which("lint-imports")
    if executable is None:
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail("CI=true but lint-imports is missing (import-linter is in the test extra)")
        pytest.skip("import-linter is not installed: pip install -e '.[test]'")
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "400"}
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [executable, "--no-cache", "--no-logo", *selected],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_import_contracts_hold() -> None:
    result = lint_imports(REPO)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 broken" in output
    for contract in OUR_CONTRACTS:
        # Each contract ran on this tree (a contract lint-imports did not run proves nothing).
        only = lint_imports(REPO, contract)
        assert only.returncode == 0 and "1 kept, 0 broken" in only.stdout, only.stdout


def copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "data")
        )
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def add_line(path: Path, line: str) -> None:
    text = path.read_text(encoding="utf-8")
    # After the module docstring and `from __future__`, where imports are legal.
    marker = "from __future__ import annotations\n"
    assert marker in text, path
    path.write_text(text.replace(marker, f"{marker}{line}\n", 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("module", "line", "contract", "named"),
    [
        (
            "catalog/validation.py",
            "from graph.state import Plan  # deliberate: catalog must not import graph",
            "catalog-is-plain",
            "catalog.validation -> graph.state",
        ),
        (
            "catalog/models.py",
            "import langgraph.graph  # deliberate: catalog stays free of LangGraph",
            "catalog-is-plain",
            "catalog.models -> langgraph (l.",
        ),
        (
            "catalog/postgres.py",
            "from catalog.store import open_catalog  # deliberate: the old cycle",
            "catalog-layers",
            "catalog.postgres -> catalog.store",
        ),
        (
            "catalog/postgres.py",
            "from catalog.index import query_tokens  # deliberate: backends stay independent",
            "catalog-layers",
            "catalog.postgres -> catalog.index",
        ),
        (
            "localmodel/server.py",
            "from graph.context import Context  # deliberate: its folder is an argument",
            "localmodel-is-plain",
            "localmodel.server -> graph.context",
        ),
        (
            "localmodel/weights.py",
            "import langchain_core.messages  # deliberate: localmodel stays free of LangChain",
            "localmodel-is-plain",
            "localmodel.weights -> langchain_core (l.",
        ),
        (
            "meaning/index.py",
            "from catalog.models import Product  # deliberate: the catalog imports meaning",
            "meaning-is-plain",
            "meaning.index -> catalog.models",
        ),
        (
            "localmodel/launcher.py",
            "from localmodel.server import LocalModelServer  # deliberate: child imports parent",
            "localmodel-layers",
            "localmodel.launcher -> localmodel.server",
        ),
        (
            "graph/nodes.py",
            "from graph.cli.main import main  # deliberate: nodes must not import the CLI",
            "graph-layers",
            "graph.nodes -> graph.cli.main",
        ),
        (
            "graph/providers/registry.py",
            "from graph.builder import build_graph  # deliberate: the old providers cycle",
            "graph-layers",
            "graph.providers.registry -> graph.builder",
        ),
        (
            "graph/cost.py",
            "from graph.nodes import planner  # deliberate: the old nodes <-> cost cycle",
            "graph-layers",
            "graph.cost -> graph.nodes",
        ),
        (
            "graph/shaping/limits.py",
            "from graph.providers.registry import PROVIDERS  # deliberate: checks need no LLM",
            "graph-layers",
            "graph.shaping.limits -> graph.providers.registry",
        ),
        (
            "graph/choosing/picks.py",
            "from graph.shaping.named import with_named_product  # deliberate: rooms stay apart",
            "graph-layers",
            "graph.choosing.picks -> graph.shaping.named",
        ),
        (
            "graph/reading/phrases.py",
            "import langgraph.types  # deliberate: the plan rooms stay free of LangGraph",
            "plan-rooms-are-plain",
            "graph.reading.phrases -> langgraph (l.",
        ),
        (
            "graph/schemas/limits.py",
            "from graph.state import State  # deliberate: the schemas know no graph state",
            "plan-rooms-are-plain",
            "graph.schemas.limits -> graph.state",
        ),
        (
            "graph/reading/phrases.py",
            "from graph.reading.stated import read_limits  # deliberate: phrases stay below",
            "reading-layers",
            "graph.reading.phrases -> graph.reading.stated",
        ),
        (
            "graph/shaping/tidy.py",
            "from graph.shaping.edits import plan_text  # deliberate: fixes know no edits",
            "shaping-layers",
            "graph.shaping.tidy -> graph.shaping.edits",
        ),
        (
            "graph/choosing/choice.py",
            "from graph.choosing.decided import contenders  # deliberate: the old two scores",
            "choosing-layers",
            "graph.choosing.choice -> graph.choosing.decided",
        ),
        (
            "graph/schemas/errors.py",
            "from graph.schemas.plan import Plan  # deliberate: errors sit at the bottom",
            "schemas-layers",
            "graph.schemas.errors -> graph.schemas.plan",
        ),
        (
            "graph/evals/webshop.py",
            "from graph.cli.render import RunView  # deliberate: the two front ends stay apart",
            "graph-layers",
            "graph.evals.webshop -> graph.cli.render",
        ),
        (
            "graph/providers/secrets.py",
            "from graph.providers.registry import PROVIDERS  # deliberate: masking stays small",
            "providers-layers",
            "graph.providers.secrets -> graph.providers.registry",
        ),
    ],
)
def test_a_deliberate_bad_import_breaks_the_contract(
    tmp_path: Path, module: str, line: str, contract: str, named: str
) -> None:
    root = copy_tree(tmp_path)
    # The untouched copy passes, so the failure below comes from the one added line.
    clean = lint_imports(root, contract)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    add_line(root / module, line)
    broken = lint_imports(root, contract)
    output = broken.stdout + broken.stderr
    assert broken.returncode != 0, output
    assert "BROKEN" in output and "0 kept, 1 broken" in output, output
    assert named in output, output


def test_the_copy_is_what_gets_checked(tmp_path: Path) -> None:
    """PYTHONPATH and cwd point lint-imports at the copy, not at an installed project."""
    root = copy_tree(tmp_path)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import catalog, graph, localmodel, meaning; "
            "print(catalog.__file__, localmodel.__file__, meaning.__file__, graph.__file__)",
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert probe.stdout.split() == [str(root / package / "__init__.py") for package in PACKAGES]
