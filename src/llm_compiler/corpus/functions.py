"""Per-function modules: one translation unit split into function-sized programs.

LLM Compiler split translation units whose prompts exceeded its context into one
module per function with ``llvm-extract`` (system notes, section 8). Each extracted
module holds the function's body and declarations of what it uses; internal
functions become external so that the optimizer keeps them.

A unit is turned into bitcode once before its functions are extracted: llvm-extract
loads bitcode lazily, reading only the function it extracts, where it parses IR text
whole; the output is the same.
"""

from __future__ import annotations

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
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
