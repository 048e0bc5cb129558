"""Compiler emulation samples: what ``opt -p <random list>`` makes of a program.

As LLM Compiler's data (system notes, section 3): for each program, random lists of
1..50 passes (length uniform, passes uniform from the searchable set), each giving
an IR-out and an assembly-out sample with the input's and the output's instruction
count and binary size. Lists that crash opt or llc, or run past the time limit
(120 s by default), are dropped and counted. List ``i`` of a program is a function
of (seed, program id, i) only, so a resumed or parallel run makes the same samples.
Each list is compiled once: the measurement, the IR and (when asked for) the assembly
come from one :meth:`~llm_compiler.core.compiler.Compiler.compile`.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, CompileTimeout
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.tasks.answers import EmulationAnswer, build_emulation_answer
from llm_compiler.tasks.prompts import EmulationTarget, emulation_prompt
from llm_compiler.tasks.samples import SampleContext

TARGETS = {"ir": EmulationTarget.IR, "asm": EmulationTarget.ASSEMBLY}


def emulation_samples(
    compiler: Compiler, program: Program, context: SampleContext
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The emulation samples of one program, and the lists dropped (by reason)."""
    dropped: Counter[str] = Counter()
    samples: list[dict[str, Any]] = []
    source = compiler.measure(program)
    settings = context.settings
    wanted = ("ir", "asm") if "asm" in settings.targets else ("ir",)
    for index in range(settings.samples_per_program + len(settings.extra_lists)):
        if index < settings.samples_per_program:
            rng = random.Random(f"{settings.seed}:{program.id}:{index}")
            passes = random_pass_list(rng, compiler.pass_set)
        else:
            passes = compiler.passes(settings.extra_lists[index - settings.samples_per_program])
        try:
            compiled = compiler.compile(program, passes, wanted)
        except CompileTimeout:
            dropped["timeout"] += 1
            continue
        except CommandFailed:
            dropped["compiler crash or error"] += 1
            continue
        result = compiled.measurement
        outputs = {"ir": compiled.ir, "asm": compiled.assembly}
        for target in settings.targets:
            prompt = emulation_prompt(
                program.ir,
                passes,
                ir_count=source.ir_instructions,
                bin_size=source.binary_size,
                target=TARGETS[target],
            )
            output = outputs[target]
            assert output is not None  # asked for above
            answer = build_emulation_answer(
                EmulationAnswer(output, result.ir_instructions, result.binary_size)
            )
            sample = context.sample(
                prompt,
                answer,
                pipeline=passes.pipeline,
                target=target,
                index=index,
                input_ir_instructions=source.ir_instructions,
                input_binary_size=source.binary_size,
                output_ir_instructions=result.ir_instructions,
                output_binary_size=result.binary_size,
            )
            if sample is None:
                dropped["over the token limit"] += 1
            else:
                samples.append(sample)
    return samples, dropped
