"""Turning what a user names on the command line into programs to measure or tune.

A *target* is a C/C++ source file, an IR file (``.ll``/``.bc``), a folder (searched
recursively for those, in sorted order) or a ``compile_commands.json`` (each entry
compiled with the flags of its own build). :func:`expand_targets` resolves targets
to :class:`ProgramSpec` values without compiling anything; :meth:`ProgramSpec.load`
runs the front end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.frontend import (
    SOURCE_SUFFIXES,
    CompileCommand,
    FrontendOptions,
    flags_from_compile_command,
)


@dataclass(frozen=True)
class ProgramSpec:
    """A program to load: a file and the front-end options to compile it with."""

    path: Path
    options: FrontendOptions

    def load(self, compiler: Compiler) -> Program:
        """Compiles (or reads) the program into unoptimized IR."""
        return compiler.load(self.path, self.options)


def _compile_commands(path: Path) -> list[ProgramSpec]:
    try:
        entries = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise InvalidInput(f"{path} is not valid JSON: {error}.") from error
    if not isinstance(entries, list):
        raise InvalidInput(f"{path} must hold a JSON list of compile commands.")
    specs = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise InvalidInput(f"{path}: every compile command must be a JSON object.")
        command = CompileCommand.from_entry(entry)
        if command.source.suffix in SOURCE_SUFFIXES:
            specs.append(ProgramSpec(command.source, flags_from_compile_command(command)))
    return specs


def expand_targets(targets: Iterable[str | Path], options: FrontendOptions) -> list[ProgramSpec]:
    """Resolves files, folders and compile_commands.json files into program specs.

    Args:
        targets: What the user named.
        options: Front-end options for plain source files (compile commands carry
            their own).

    Raises:
        InvalidInput: A target does not exist, or a folder holds no program.
    """
    specs: list[ProgramSpec] = []
    for target in map(Path, targets):
        if target.is_dir():
            found = sorted(
                path for path in target.rglob("*") if path.is_file() and path.suffix in SOURCE_SUFFIXES
            )
            if not found:
                raise InvalidInput(
                    f"{target}: the folder holds no C, C++ or LLVM-IR file "
                    f"({', '.join(sorted(SOURCE_SUFFIXES))})."
                )
            specs.extend(ProgramSpec(path, options) for path in found)
        elif target.name == "compile_commands.json" and target.is_file():
            specs.extend(_compile_commands(target))
        elif target.is_file():
            specs.append(ProgramSpec(target, options))
        else:
            raise InvalidInput(f"{target}: no such file or folder.")
    return specs
