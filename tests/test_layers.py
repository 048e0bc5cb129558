"""The package's layers import downwards only.

Each top-level module or folder of ``llm_compiler`` has a rank; a module may import
modules of its own folder and of lower ranks, never of a higher rank or of another
folder of the same rank (siblings stay independent). Imports inside functions count
too. The layers, low to high, are documented in the README's layout section.

Above that, only the selection layer decides what is kept: the folders that propose
lists, keep objects or report results (``autotune``, ``models``, ``predictor``,
``evaluation``, ``driver``, ``cli``) never import ``llm_compiler.validation``; they
reach the gate through ``llm_compiler.selection``. The ``validate`` and ``passes
--audit`` commands are validation's own front ends and are the exceptions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import llm_compiler

PACKAGE = Path(llm_compiler.__file__).parent

#: Low to high. Folders on one line are siblings: neither may import the other.
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("files",),
    ("toolchain",),
    ("passes",),
    ("core",),
    ("validation",),
    ("selection",),
    ("corpus",),
    ("autotune", "tasks"),
    ("models",),
    ("predictor",),
    ("evaluation", "driver"),
    ("training",),
    ("gym",),
    ("cli",),
    ("__main__",),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _part(module: str) -> str:
    """The top-level folder or module of ``llm_compiler.<part>...``."""
    return module.split(".")[1]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``llm_compiler`` import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.startswith("llm_compiler.")]
    return found


def back_edges(root: Path) -> list[str]:
    """Every import of ``root``'s package that goes up or sideways, as readable lines."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        own = relative.parts[0].removesuffix(".py")
        if own == "__init__":
            continue
        for line, module in imports(path):
            target = _part(module)
            if target == own:
                continue
            if own not in RANK or target not in RANK:
                problems.append(f"{relative}:{line}: {own} or {target} has no layer in tests/test_layers.py")
            elif RANK[target] >= RANK[own]:
                kind = "a sibling" if RANK[target] == RANK[own] else "a higher layer"
                problems.append(f"{relative}:{line}: {own} imports {module}, {kind}")
    return problems


def test_no_module_imports_upwards_or_sideways() -> None:
    assert back_edges(PACKAGE) == []


def test_a_back_edge_is_named(tmp_path: Path) -> None:
    (tmp_path / "toolchain").mkdir()
    (tmp_path / "toolchain" / "llvm.py").write_text(
        "def f():\n    from llm_compiler.passes.pipeline import PassList\n"
    )
    (tmp_path / "autotune").mkdir()
    (tmp_path / "autotune" / "jobs.py").write_text("import llm_compiler.tasks.samples\n")
    assert back_edges(tmp_path) == [
        "autotune/jobs.py:1: autotune imports llm_compiler.tasks.samples, a sibling",
        "toolchain/llvm.py:2: toolchain imports llm_compiler.passes.pipeline, a higher layer",
    ]


PARTS = sorted(
    path.name.removesuffix(".py")
    for path in PACKAGE.iterdir()
    if (path.suffix == ".py" or (path / "__init__.py").is_file()) and path.name != "__init__.py"
)


@pytest.mark.parametrize("name", PARTS)
def test_every_part_of_the_package_has_a_layer(name: str) -> None:
    assert name in RANK, f"llm_compiler/{name} has no layer in tests/test_layers.py"


#: Folders that must reach validation through the selection layer only.
SELECTION_ONLY = ("autotune", "models", "predictor", "evaluation", "driver", "cli")

#: Validation's own commands, which run PassListEval and the audit directly.
VALIDATION_FRONT_ENDS = {"cli/validate.py", "cli/passes.py"}


def validation_callers(root: Path) -> list[str]:
    """Every import of ``llm_compiler.validation`` from a folder that must use the selection layer."""
    problems = []
    for folder in SELECTION_ONLY:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative in VALIDATION_FRONT_ENDS:
                continue
            for line, module in imports(path):
                if _part(module) == "validation":
                    problems.append(f"{relative}:{line}: imports {module}; use llm_compiler.selection")
    return problems


def test_only_the_selection_layer_calls_validation() -> None:
    assert validation_callers(PACKAGE) == []


def test_a_direct_call_of_validation_is_named(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "optimize.py").write_text(
        "def f():\n    from llm_compiler.validation.gate import Gate\n"
    )
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "validate.py").write_text("import llm_compiler.validation.passlisteval\n")
    (tmp_path / "autotune").mkdir()
    (tmp_path / "autotune" / "jobs.py").write_text("from llm_compiler.validation.gate import Gate\n")
    assert validation_callers(tmp_path) == [
        "autotune/jobs.py:1: imports llm_compiler.validation.gate; use llm_compiler.selection",
        "models/optimize.py:2: imports llm_compiler.validation.gate; use llm_compiler.selection",
    ]
