"""Per-function modules: one translation unit split into function-sized programs.

LLM Compiler split translation units whose prompts exceeded its context into one
module per function with ``llvm-extract`` (system notes, section 8). Each extracted
module holds the function's body and declarations of what it uses; internal
functions become external so that the optimizer keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable

from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.toolchain.measure import Compiler, Program
from llm_compiler.toolchain.runner import run_command


def extract_function(compiler: Compiler, program: Program, function: str) -> Program:
    """The module ``llvm-extract --func=<function>`` makes of ``program``.

    Raises:
        CommandFailed: llvm-extract failed (e.g. no such function).
    """
    result = run_command(
        [compiler.toolchain.tool("llvm-extract"), f"--func={function}", "-S", "-o", "-", "-"],
        timeout=compiler.timeout,
        input=program.ir.encode(),
        subject=f"{program.name} function {function}",
    )
    return Program(
        name=f"{program.name}:{function}", ir=result.stdout_text, language="ir", source=program.source
    )


def split_functions(
    compiler: Compiler, program: Program, functions: Iterable[str] | None = None
) -> list[Program]:
    """One program per defined function of ``program`` (or per name in ``functions``)."""
    names = defined_functions(program.ir) if functions is None else list(functions)
    return [extract_function(compiler, program, name) for name in names]
