"""Disassembly samples: assembly in, the LLVM-IR it was compiled from out.

As LLM Compiler's data (system notes, section 7): each program's IR is optimized with
``-Oz`` and lowered to assembly by ``llc``; the pair (assembly -> IR) is a sample.
The IR, its assembly and its measurement come from one compile, and lowering the
stored IR again with ``llc`` gives the stored assembly exactly, which is what the
round-trip evaluation relies on. Assembly is for the target of the IR: x86-64 for
the host's front end; AArch64 (opt-in) by compiling sources with
``--target aarch64-linux-gnu``, clang's cross target.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import CommandFailed, CompileTimeout
from llm_compiler.tasks.answers import DisassemblyAnswer, build_disassembly_answer
from llm_compiler.tasks.prompts import disassembly_prompt
from llm_compiler.tasks.samples import SampleContext


def target_of(ir: str) -> str:
    """The target triple named in IR text (``""`` when none is)."""
    for line in ir.splitlines():
        if line.startswith("target triple = "):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


def disassembly_samples(
    compiler: Compiler, program: Program, context: SampleContext
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The disassembly sample of one program."""
    dropped: Counter[str] = Counter()
    passes = compiler.passes(OZ_PIPELINE)
    try:
        compiled = compiler.compile(program, passes, ("ir", "asm"))
    except CompileTimeout:
        dropped["timeout"] += 1
        return [], dropped
    except CommandFailed:
        dropped["compiler crash or error"] += 1
        return [], dropped
    optimized, assembly, measurement = compiled.ir, compiled.assembly, compiled.measurement
    assert optimized is not None and assembly is not None  # asked for above
    sample = context.sample(
        disassembly_prompt(assembly),
        build_disassembly_answer(DisassemblyAnswer(optimized)),
        pipeline=passes.pipeline,
        target=target_of(optimized),
        output_ir_instructions=measurement.ir_instructions,
        output_binary_size=measurement.binary_size,
    )
    if sample is None:
        dropped["over the token limit"] += 1
        return [], dropped
    return [sample], dropped
