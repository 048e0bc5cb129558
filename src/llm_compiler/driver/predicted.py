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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.cc import short_reason
from llm_compiler.driver.choose import Choice
from llm_compiler.errors import CommandFailed
from llm_compiler.models.proposed import ProposerOptimizer, proposer_optimizer
from llm_compiler.selection import make_gate
from llm_compiler.selection.outcomes import Verdict


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

    @property
    def optimizer(self) -> ProposerOptimizer:
        """The predictor with its gate (made on first use)."""
        if self._optimizer is None:
            gate = make_gate(self.compiler, self.suites)
            self._optimizer = proposer_optimizer(
                self.compiler, gate, self.spec, self.jobs, objective=self.objective
            )
            self._optimizer.measure_unoptimized = False  # a unit's log does not report it
        return self._optimizer

    def confirm(self, program: Program, choice: Choice, basis: str) -> Choice:
        """``choice``, made for another form of the unit (``basis``), for ``program``: kept if
        it is smaller than -Oz here and passes the same checks as a list chosen here
        (the determinism check and the gate, with this unit's own link); else -Oz."""
        selector = self.optimizer.selector
        passes = self.compiler.passes(choice.pipeline)
        about = f"{self.spec}: the list chosen for {basis}"
        # -Oz and two independent compiles of the list (the determinism check's), at once.
        with ThreadPoolExecutor(max_workers=3) as pool:
            oz_size = pool.submit(selector.oz_size, program)
            first, second = (
                pool.submit(self.compiler.object_code, program, passes, fresh=True) for _ in range(2)
            )
            try:
                measured = first.result()[1]
            except CommandFailed as error:
                return Choice(OZ_PIPELINE, "oz", f"{about} failed here, -Oz kept: {short_reason(error)}")
            size, digest = self.objective.of(measured), measured.ir_hash
            oz = oz_size.result()
            if size >= oz:
                why = f"{about}: {size} bytes here, not below -Oz's {oz}, -Oz kept"
                return Choice(OZ_PIPELINE, "oz", why)
            verdict, detail, _, _ = selector.check(
                program, passes, size, digest, second=lambda: second.result()[1]
            )
        if verdict is not Verdict.VALIDATED:
            return Choice(OZ_PIPELINE, "oz", f"{about}: {verdict.value} here ({detail}), -Oz kept")
        return Choice(
            choice.pipeline,
            "predicted",
            f"{about}: {size} bytes vs -Oz {oz} here (llc, {self.objective.value}), validated",
        )

    def choose(self, program: Program) -> Choice:
        (proposal,) = self.optimizer.propose([program])
        result = self.optimizer.decide(program.name, program, proposal)
        if result.fallback is not None:
            reason = f"{self.spec}: -Oz kept: {result.fallback.value}: {result.fallback_detail}"
            return Choice(OZ_PIPELINE, "oz", reason)
        return Choice(
            result.chosen,
            "predicted",
            f"{self.spec}: {result.binary_size} bytes vs -Oz {result.oz_size} (llc, {self.objective.value}), "
            "validated",
        )
