"""The built-in predictor as the driver's chooser: what ``optimize`` does, for one unit.

For a unit no tuning run covers, :class:`Predicted` ranks the predictor's candidates,
measures the top k beside -Oz and validates the smallest that beat it with the gate
``tune`` and ``optimize`` use; the first to pass is the choice (origin ``predicted``),
else -Oz (origin ``oz``) with the reason. PassListEval keeps its verdicts on disk, so a list validated
while compiling one unit is not checked again for the next one, in this build or the
next. The compiler and the gate are made on first use, so a build whose units are all
tuned never loads the predictor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.choose import Choice
from llm_compiler.models.proposed import ProposerOptimizer, proposer_optimizer
from llm_compiler.selection import make_gate


@dataclass
class Predicted:
    """The predictor's validated choice for a unit (module docstring).

    Args:
        compiler: Measures the candidates (the driver's).
        spec: ``builtin``, ``builtin:k=N``, ``builtin:max=N`` or ``builtin:PATH[,k=N]``.
        suites: PassListEval suites a list must pass (suite names, as ``--suite`` takes them).
        jobs: Candidates measured at once.
        objective: What "smaller" means (binary size by default).
    """

    compiler: Compiler
    spec: str = "builtin"
    suites: Sequence[str] = ("builtin",)
    jobs: int = 1
    objective: Objective = DEFAULT_OBJECTIVE
    _optimizer: ProposerOptimizer | None = field(default=None, init=False, repr=False)

    def choose(self, program: Program) -> Choice:
        if self._optimizer is None:
            gate = make_gate(self.compiler, self.suites)
            self._optimizer = proposer_optimizer(
                self.compiler, gate, self.spec, self.jobs, objective=self.objective
            )
            self._optimizer.measure_unoptimized = False  # a unit's log does not report it
        (proposal,) = self._optimizer.propose([program])
        result = self._optimizer.decide(program.name, program, proposal)
        if result.fallback is not None:
            reason = f"{self.spec}: -Oz kept: {result.fallback.value}: {result.fallback_detail}"
            return Choice(OZ_PIPELINE, "oz", reason)
        return Choice(
            result.chosen,
            "predicted",
            f"{self.spec}: {result.binary_size} bytes vs -Oz {result.oz_size} (llc, {self.objective.value}), "
            "validated",
        )
