"""Flag tuning samples: the autotuner's best validated list for each program.

The labels come from a tuning run (``llm-compiler tune --out DIR``; its store is
``DIR/tune.sqlite``): per program, the final list — minimized, broadcast, and checked
by PassListEval — and its size. The sample's prompt is the unoptimized IR; its answer
is that list as an ``opt -p`` argument with the binary size before (the input's) and
after, and the optimized IR. When the list does not make the object smaller than the
input, the answer is the short one giving only the input's size. Lists that were not
validated (``--no-validate`` runs) are not used unless asked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.core.store import Store
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput
from llm_compiler.tasks.answers import AlreadyOptimalAnswer, PassListAnswer, build_flag_tuning_answer
from llm_compiler.tasks.prompts import flag_tuning_prompt
from llm_compiler.tasks.samples import SampleContext


@dataclass(frozen=True)
class TuningLabel:
    """A program's best list from a tuning run."""

    pipeline: str
    size: int
    validated: bool
    detail: str


def read_labels(path: Path) -> dict[str, TuningLabel]:
    """The final list of each program of a tuning run (``--out`` folder or its tune.sqlite).

    Raises:
        InvalidInput: No tuning store there, or one without final results.
    """
    database = path / "tune.sqlite" if path.is_dir() else path
    store = Store(database, read_only=True)
    try:
        finals = store.final_results()
    finally:
        store.close()
    labels = {
        final.program_id: TuningLabel(final.pipeline, final.binary_size, final.validated, final.validation)
        for final in finals
    }
    if not labels:
        raise InvalidInput(f"{database} holds no final results; let the tuning run finish (--resume).")
    return labels


def flag_tuning_samples(
    compiler: Compiler, program: Program, context: SampleContext, label: TuningLabel | None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The flag tuning sample of one program (none when it was not tuned)."""
    dropped: Counter[str] = Counter()
    if label is None:
        dropped["not tuned"] += 1
        return [], dropped
    if context.settings.require_validation and not label.validated:
        dropped["not validated"] += 1
        return [], dropped
    before = compiler.measure(program)
    passes = compiler.passes(label.pipeline)
    try:
        compiled = compiler.compile(program, passes, ("ir",))
    except CompileTimeout:
        dropped["timeout"] += 1
        return [], dropped
    except CommandFailed:
        dropped["compiler crash or error"] += 1
        return [], dropped
    after, optimized = compiled.measurement, compiled.ir
    assert optimized is not None  # asked for above
    if after.binary_size < before.binary_size:
        answer = build_flag_tuning_answer(
            PassListAnswer(passes, before.binary_size, after.binary_size, optimized)
        )
    else:
        answer = build_flag_tuning_answer(AlreadyOptimalAnswer(before.binary_size))
    sample = context.sample(
        flag_tuning_prompt(program.ir),
        answer,
        pipeline=passes.pipeline,
        input_ir_instructions=before.ir_instructions,
        input_binary_size=before.binary_size,
        output_ir_instructions=after.ir_instructions,
        output_binary_size=after.binary_size,
        tuned_size=label.size,
        validation=label.detail,
    )
    if sample is None:
        dropped["over the token limit"] += 1
        return [], dropped
    return [sample], dropped
