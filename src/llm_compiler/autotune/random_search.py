"""Random search over the searchable pass set, with -Oz as the baseline.

LLM Compiler's autotuner starts with random search (system notes, section 5): for
each program, independent random lists of 1..50 passes (length uniform, passes drawn
uniformly from the searchable set), keeping the list that gives the smallest binary.
``default<Oz>`` is always evaluated first and is the baseline; a list is only ever
reported as better when it is strictly smaller than -Oz *and* passed validation
(:mod:`llm_compiler.validation`). Each program's search uses its own random stream,
derived from the seed and the program id, so results do not depend on the order or
the parallelism in which programs are tuned.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.errors import CommandFailed
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet
from llm_compiler.toolchain.measure import OZ_PIPELINE, Compiler, Measurement, Program
from llm_compiler.validation.differential import DifferentialChecker
from llm_compiler.validation.outcomes import Outcome

#: LLM Compiler's longest random list.
MAX_LIST_LENGTH = 50

#: How many of the best candidates are checked before falling back to -Oz.
MAX_VALIDATION_ATTEMPTS = 5


def random_pass_list(rng: random.Random, pass_set: PassSet, max_length: int = MAX_LIST_LENGTH) -> PassList:
    """A list of 1..``max_length`` passes drawn uniformly from ``pass_set``."""
    length = rng.randint(1, max_length)
    return PassList.concat(rng.choice(pass_set.member_lists) for _ in range(length))


@dataclass(frozen=True)
class TuningResult:
    """The replayable outcome of tuning one program.

    Attributes:
        program: The program's name.
        program_id: Its stable id (hash of the unoptimized IR).
        llvm_version: The LLVM used.
        unoptimized: The input's measurement.
        oz: The -Oz baseline.
        best: The best validated measurement (-Oz itself when nothing beat it).
        compiles: Pass lists evaluated, -Oz included.
        failures: Pass lists that crashed or timed out in the compiler.
        rejected: Better lists that failed validation, with their outcome.
        validation: How the best list was checked, in words.
    """

    program: str
    program_id: str
    llvm_version: str
    unoptimized: Measurement
    oz: Measurement
    best: Measurement
    compiles: int
    failures: int
    rejected: tuple[tuple[str, str], ...] = ()
    validation: str = ""

    @property
    def best_pipeline(self) -> str:
        assert self.best.pipeline is not None
        return self.best.pipeline

    @property
    def improvement_vs_oz(self) -> float:
        """Fractional binary-size reduction relative to -Oz (0.05 = 5% smaller)."""
        if self.oz.binary_size == 0:
            return 0.0
        return 1.0 - self.best.binary_size / self.oz.binary_size

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "program_id": self.program_id,
            "llvm_version": self.llvm_version,
            "unoptimized_size": self.unoptimized.binary_size,
            "oz_size": self.oz.binary_size,
            "best_size": self.best.binary_size,
            "best_ir_instructions": self.best.ir_instructions,
            "best_pipeline": self.best_pipeline,
            "improvement_vs_oz": self.improvement_vs_oz,
            "compiles": self.compiles,
            "failures": self.failures,
            "rejected": [{"pipeline": p, "outcome": o} for p, o in self.rejected],
            "validation": self.validation,
        }


@dataclass
class _Candidates:
    by_pipeline: dict[str, Measurement] = field(default_factory=dict)

    def add(self, measurement: Measurement) -> None:
        assert measurement.pipeline is not None
        self.by_pipeline.setdefault(measurement.pipeline, measurement)

    def ranked_below(self, limit: int) -> list[Measurement]:
        """Distinct candidates strictly smaller than ``limit``, best (then shortest) first."""
        better = [m for m in self.by_pipeline.values() if m.binary_size < limit]
        return sorted(better, key=lambda m: (m.binary_size, len(m.pipeline or ""), m.pipeline))


def tune_program(
    compiler: Compiler,
    program: Program,
    *,
    budget: int,
    seed: int,
    checker: DifferentialChecker | None = None,
    on_compile: Callable[[Measurement | None], None] | None = None,
) -> TuningResult:
    """Random search on one program.

    Args:
        compiler: Measures candidates.
        program: The program to tune.
        budget: Pass lists to evaluate, the -Oz baseline included (at least 1).
        seed: Seed of the search; the program id is mixed in.
        checker: Validates the winner on runnable programs; None reports the best
            list as unchecked.
        on_compile: Called after each evaluation with its measurement (None if the
            compiler failed on it).

    Returns:
        The result, whose ``best`` is never larger than -Oz.
    """
    if budget < 1:
        raise ValueError("budget must be at least 1 (the -Oz baseline)")
    rng = random.Random(f"{seed}:{program.id}")
    unoptimized = compiler.measure(program)
    oz = compiler.measure_oz(program)
    if on_compile:
        on_compile(oz)
    candidates = _Candidates()
    failures = 0
    for _ in range(budget - 1):
        passes = random_pass_list(rng, compiler.pass_set)
        try:
            measurement: Measurement | None = compiler.measure(program, passes)
        except CommandFailed:
            measurement = None
            failures += 1
        if measurement is not None:
            candidates.add(measurement)
        if on_compile:
            on_compile(measurement)
    best, rejected, validation = _validated_best(compiler, program, oz, candidates, checker)
    return TuningResult(
        program=program.name,
        program_id=program.id,
        llvm_version=compiler.llvm_version,
        unoptimized=unoptimized,
        oz=oz,
        best=best,
        compiles=budget,
        failures=failures,
        rejected=tuple(rejected),
        validation=validation,
    )


def _validated_best(
    compiler: Compiler,
    program: Program,
    oz: Measurement,
    candidates: _Candidates,
    checker: DifferentialChecker | None,
) -> tuple[Measurement, list[tuple[str, str]], str]:
    ranked = candidates.ranked_below(oz.binary_size)
    if not ranked:
        return oz, [], f"nothing beat -Oz; -Oz ({OZ_PIPELINE}) kept"
    if checker is None:
        return ranked[0], [], "unchecked: no validation was requested"
    rejected: list[tuple[str, str]] = []
    for measurement in ranked[:MAX_VALIDATION_ATTEMPTS]:
        result = checker.check(program, compiler.passes(measurement.pipeline or ""))
        if result.outcome is Outcome.PASS:
            return measurement, rejected, "passed: same output and exit status as the -O0 build"
        if result.outcome is Outcome.UNSUPPORTED:
            return oz, rejected, f"could not be checked ({result.detail}); -Oz kept"
        rejected.append((result.pipeline, str(result.outcome)))
    return oz, rejected, f"the {len(rejected)} best lists failed validation; -Oz kept"


def geometric_mean_improvement(results: Sequence[TuningResult]) -> float:
    """Geometric-mean binary-size reduction over -Oz (LLM Compiler's headline metric)."""
    ratios = [r.best.binary_size / r.oz.binary_size for r in results if r.oz.binary_size > 0]
    if not ratios:
        return 0.0
    return 1.0 - math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
