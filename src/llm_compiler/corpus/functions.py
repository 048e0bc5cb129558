"""Per-function modules: one translation unit split into function-sized programs.

LLM Compiler split translation units whose prompts exceeded its context into one
module per function with ``llvm-extract`` (system notes, section 8). Each extracted
module holds the function's body and declarations of what it uses; internal
functions become external so that the optimizer keeps them.

A unit is turned into bitcode once before its functions are extracted: llvm-extract
loads bitcode lazily, reading only the function it extracts, where it parses IR text
whole. On sqlite3's amalgamation (15 MB of IR) one extraction takes 0.03 s instead of
1.2 s, with the same output.
"""

from __future__ import annotations

from collections.abc import Iterable

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.toolchain.runner import run_command


def module_bitcode(compiler: Compiler, program: Program) -> bytes:
    """``program`` as bitcode (``llvm-as``), for fast repeated extraction.

    Raises:
        CommandFailed: llvm-as rejected the IR.
    """
    result = run_command(
        [compiler.toolchain.tool("llvm-as"), "-o", "-", "-"],
        timeout=compiler.timeout,
        input=program.ir.encode(),
        subject=program.name,
    )
    return result.stdout


def extract_function(
    compiler: Compiler, program: Program, function: str, bitcode: bytes | None = None
) -> Program:
    """The module ``llvm-extract --func=<function>`` makes of ``program``.

    Args:
        compiler: Gives the LLVM tools and the time limit.
        program: The whole unit.
        function: A function defined in it.
        bitcode: ``program`` as bitcode (:func:`module_bitcode`), when extracting many.

    Raises:
        CommandFailed: llvm-extract failed (e.g. no such function).
    """
    result = run_command(
        [compiler.toolchain.tool("llvm-extract"), f"--func={function}", "-S", "-o", "-", "-"],
        timeout=compiler.timeout,
        input=bitcode if bitcode is not None else program.ir.encode(),
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
    bitcode = module_bitcode(compiler, program)
    return [extract_function(compiler, program, name, bitcode) for name in names]
