#!/usr/bin/env python3
"""Print the differences between two LLVM versions' pass registries, and check a version map.

``src/llm_compiler/passes/data/llvm-17-to-19.json`` (the map that
:mod:`llm_compiler.passes.versions` applies to pass lists written for LLVM 17) was made
from what this script prints; ``--check`` proves that the map still covers exactly
those differences, so the map can be re-derived and reviewed at any time::

    # LLVM 17's registry, from llvm/lib/Passes/PassRegistry.def at llvmorg-17.0.6
    # (LLVM 17 is not installable here), in the format of `opt --print-passes`:
    scripts/derive_version_map.py from-def PassRegistry.def > llvm-17.0.6-passes.txt

    # the differences, 17 -> the installed opt (or a saved `opt --print-passes`):
    scripts/derive_version_map.py diff src/llm_compiler/passes/data/llvm-17.0.6-passes.txt opt-19

    # the shipped map covers exactly those differences (exit status 1 if not):
    scripts/derive_version_map.py check src/llm_compiler/passes/data/llvm-17.0.6-passes.txt opt-19 \\
        src/llm_compiler/passes/data/llvm-17-to-19.json

The second registry may be an ``opt`` command (its ``--print-passes`` is run) or a
file holding such output. Differences are counted by name, not by IR level: a
transform pass whose name is gone, an analysis name that ``require<...>`` and
``invalidate<...>`` can no longer name, and parameter options a pass no longer
documents. Names only the newer version has are printed for information.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.passes.registry import PassRegistry, RegisteredPass

# ---------------------------------------------------------------------------
# PassRegistry.def -> `opt --print-passes`
# ---------------------------------------------------------------------------

#: The sections of LLVM 17's PassBuilder::printPassNames, in its order, and the
#: PassRegistry.def macros each prints (an *_ALIAS_ANALYSIS also counts as an analysis).
PRINT_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Module passes", ("MODULE_PASS",)),
    ("Module passes with params", ("MODULE_PASS_WITH_PARAMS",)),
    ("Module analyses", ("MODULE_ANALYSIS", "MODULE_ALIAS_ANALYSIS")),
    ("Module alias analyses", ("MODULE_ALIAS_ANALYSIS",)),
    ("CGSCC passes", ("CGSCC_PASS",)),
    ("CGSCC passes with params", ("CGSCC_PASS_WITH_PARAMS",)),
    ("CGSCC analyses", ("CGSCC_ANALYSIS",)),
    ("Function passes", ("FUNCTION_PASS",)),
    ("Function passes with params", ("FUNCTION_PASS_WITH_PARAMS",)),
    ("Function analyses", ("FUNCTION_ANALYSIS", "FUNCTION_ALIAS_ANALYSIS")),
    ("Function alias analyses", ("FUNCTION_ALIAS_ANALYSIS",)),
    ("LoopNest passes", ("LOOPNEST_PASS",)),
    ("Loop passes", ("LOOP_PASS",)),
    ("Loop passes with params", ("LOOP_PASS_WITH_PARAMS",)),
    ("Loop analyses", ("LOOP_ANALYSIS",)),
)
_MACRO_RE = re.compile(r"^\s*([A-Z_]+)\s*\(", re.MULTILINE)
_STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _strip_def(text: str) -> str:
    """The .def text without comments and preprocessor lines (with their continuations)."""
    kept: list[str] = []
    continuing = False
    for line in text.splitlines():
        directive = continuing or line.lstrip().startswith("#")
        continuing = directive and line.rstrip().endswith("\\")
        if not directive:
            kept.append(re.sub(r"//.*$", "", line))
    return "\n".join(kept)


def _arguments(text: str, start: int) -> tuple[list[str], int]:
    """The top-level comma-separated arguments of the call whose '(' is at ``start``."""
    depth, args, current, index = 0, [], [], start
    while index < len(text):
        char = text[index]
        if char == '"':
            end = _STRING_RE.match(text, index)
            assert end is not None, f"unterminated string at {index}"
            current.append(end.group())
            index = end.end()
            continue
        if char in "([{":
            depth += 1
            if depth == 1:
                index += 1
                continue
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(current).strip())
                return args, index + 1
        elif char == "," and depth == 1:
            args.append("".join(current).strip())
            current = []
            index += 1
            continue
        current.append(char)
        index += 1
    raise ValueError("unbalanced parentheses in PassRegistry.def")


def _string(argument: str) -> str:
    """The value of a (possibly concatenated) C string literal argument."""
    parts = _STRING_RE.findall(argument)
    if not parts:
        raise ValueError(f"expected a string literal, got {argument!r}")
    return "".join(parts)


def def_entries(text: str) -> Iterator[tuple[str, str]]:
    """(macro, printed spelling) for every registration in a PassRegistry.def, in order."""
    macros = {macro for _, names in PRINT_SECTIONS for macro in names}
    body = _strip_def(text)
    for match in _MACRO_RE.finditer(body):
        macro = match.group(1)
        if macro not in macros:
            continue
        args, _ = _arguments(body, match.end() - 1)
        name = _string(args[0])
        yield macro, (f"{name}<{_string(args[-1])}>" if macro.endswith("_WITH_PARAMS") else name)


def print_passes_from_def(text: str, header: str = "") -> str:
    """What LLVM 17's ``opt --print-passes`` prints for this PassRegistry.def.

    ``header`` becomes ``#`` comment lines above it (a registry reader skips them).
    """
    entries = list(def_entries(text))
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for header, macros in PRINT_SECTIONS:
        lines.append(f"{header}:")
        lines += [f"  {spelling}" for macro, spelling in entries if macro in macros]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The differences
# ---------------------------------------------------------------------------


def load(source: str) -> PassRegistry:
    """A registry from a saved ``--print-passes`` file, or from running an ``opt`` (an executable)."""
    path = Path(source)
    if path.is_file() and not os.access(path, os.X_OK):
        return PassRegistry.parse(path.read_text())
    result = subprocess.run([source, "--print-passes"], capture_output=True, text=True, check=True)
    return PassRegistry.parse(result.stdout)


def _key(entry: RegisteredPass) -> str:
    return entry.spelling if entry.fixed_params else entry.name


def _levels(registry: PassRegistry, kind: str) -> dict[str, set[str]]:
    levels: dict[str, set[str]] = {}
    for entry in registry.entries:
        if entry.kind == kind or (kind == "analysis" and entry.kind == "alias-analysis"):
            levels.setdefault(_key(entry), set()).add(entry.level)
    return levels


def _options(registry: PassRegistry) -> dict[str, set[str]]:
    return {
        entry.name: set(entry.params)
        for entry in registry.entries
        if entry.kind == "pass" and entry.params and not entry.fixed_params
    }


@dataclass(frozen=True)
class Diff:
    """What a pass list written for the old version may name that the new one lacks.

    Attributes:
        passes: Transform pass names (or fixed spellings) gone, with their old levels,
            and names still there that lost an IR level.
        analyses: Analysis names gone (used only inside ``require<>``/``invalidate<>``).
        options: For each pass in both, parameter options the new version lacks.
        added_passes: Transform names only the new version has (for information).
        added_options: Options only the new version documents (for information).
    """

    passes: dict[str, list[str]]
    analyses: dict[str, list[str]]
    options: dict[str, list[str]]
    added_passes: dict[str, list[str]]
    added_options: dict[str, list[str]]


def diff(old: PassRegistry, new: PassRegistry) -> Diff:
    """The differences between two registries, old -> new."""
    old_passes, new_passes = _levels(old, "pass"), _levels(new, "pass")
    old_analyses, new_analyses = _levels(old, "analysis"), _levels(new, "analysis")
    old_options, new_options = _options(old), _options(new)
    both = sorted(set(old_options) & set(new_options))
    return Diff(
        passes={
            k: sorted(v)
            for k, v in sorted(old_passes.items())
            if k not in new_passes or v - new_passes[k] - {"machine"}
        },
        analyses={k: sorted(v) for k, v in sorted(old_analyses.items()) if k not in new_analyses},
        options={
            name: sorted(old_options[name] - new_options[name])
            for name in both
            if old_options[name] - new_options[name]
        },
        added_passes={k: sorted(v) for k, v in sorted(new_passes.items()) if k not in old_passes},
        added_options={
            name: sorted(new_options[name] - old_options[name])
            for name in both
            if new_options[name] - old_options[name]
        },
    )


def print_diff(found: Diff) -> None:
    print(
        "# transform passes the old version has and the new one lacks, or lacks at a level (name: old levels)"
    )
    for name, levels in found.passes.items():
        print(f"- pass {name}: {', '.join(levels)}")
    print("# analyses the old version has and the new one lacks (for require<>/invalidate<>)")
    for name, levels in found.analyses.items():
        print(f"- analysis {name}: {', '.join(levels)}")
    print("# parameter options the old version documents and the new one does not")
    for name, options in found.options.items():
        print(f"- option {name}<{';'.join(options)}>")
    print("# for information: transform passes only the new version has")
    for name, levels in found.added_passes.items():
        print(f"+ pass {name}: {', '.join(levels)}")
    print("# for information: parameter options only the new version documents")
    for name, options in found.added_options.items():
        print(f"+ option {name}<{';'.join(options)}>")


def check(found: Diff, new: PassRegistry, table: dict[str, object]) -> list[str]:
    """Problems with ``table`` against the differences (an empty list: none)."""
    problems = []
    passes = table.get("passes", {})
    analyses = table.get("analyses", {})
    options = table.get("options", {})
    assert isinstance(passes, dict) and isinstance(analyses, dict) and isinstance(options, dict)
    for section, wanted, have in (("passes", found.passes, passes), ("analyses", found.analyses, analyses)):
        for name in sorted(set(wanted) - set(have)):
            problems.append(f"{section}: {name!r} is gone in the new version but the table has no decision")
        for name in sorted(set(have) - set(wanted)):
            problems.append(f"{section}: {name!r} has a decision but is not a difference")
    wanted_options = {(name, option) for name, gone in found.options.items() for option in gone}
    have_options = {(name, option) for name, entries in options.items() for option in entries}
    for name, option in sorted(wanted_options - have_options):
        problems.append(f"options: {name}<{option}> is gone in the new version but has no decision")
    for name, option in sorted(have_options - wanted_options):
        problems.append(f"options: {name}<{option}> has a decision but is not a difference")
    new_passes, new_analyses = _levels(new, "pass"), _levels(new, "analysis")
    for section, decisions, known in (("passes", passes, new_passes), ("analyses", analyses, new_analyses)):
        for name, decision in decisions.items():
            target = decision.get("new")
            if decision.get("action") == "rename" and target not in known:
                problems.append(f"{section}: {name!r} maps to {target!r}, which the new version lacks")
    for name, entries in options.items():
        for option, decision in entries.items():
            target = decision.get("new")
            if decision.get("action") == "rename" and target not in new.param_options(name):
                problems.append(f"options: {name}<{option}> maps to {target!r}, not an option of {name}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    from_def = commands.add_parser("from-def", help="PassRegistry.def -> `opt --print-passes` text")
    from_def.add_argument("def_file")
    from_def.add_argument("--header", default="", help="comment lines to put above the listing")
    for name in ("diff", "check"):
        command = commands.add_parser(name)
        command.add_argument("old", help="the old version's --print-passes (a file)")
        command.add_argument("new", help="the new version's --print-passes (a file or an opt command)")
        if name == "check":
            command.add_argument("table", help="the version map (JSON)")
    args = parser.parse_args(argv)
    if args.command == "from-def":
        sys.stdout.write(print_passes_from_def(Path(args.def_file).read_text(), args.header))
        return 0
    old, new = load(args.old), load(args.new)
    found = diff(old, new)
    if args.command == "diff":
        print_diff(found)
        return 0
    problems = check(found, new, json.loads(Path(args.table).read_text()))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(
            f"{args.table}: covers all {len(found.passes)} passes, {len(found.analyses)} analyses and "
            f"{sum(map(len, found.options.values()))} options that differ"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
