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
from dataclasses import dataclass, field, replace

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.choose import Choice
from llm_compiler.models.proposed import ProposerOptimizer, proposer_optimizer
from llm_compiler.selection import Candidate, Selector, make_gate


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
    _confirmer: Selector | None = field(default=None, init=False, repr=False)

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

    @property
    def confirmer(self) -> Selector:
        """The selection layer as :meth:`confirm` uses it: the predictor's compiler, gate and
        objective, one candidate whose determinism check's second compile starts beside
        its measurement and -Oz's, no salvage."""
        if self._confirmer is None:
            selector = self.optimizer.selector
            policy = replace(selector.policy, salvage=False, second_beside=True)
            self._confirmer = Selector(self.compiler, selector.gate, policy)
        return self._confirmer

    def confirm(self, program: Program, choice: Choice, basis: str) -> Choice:
        """``choice``, made for another form of the unit (``basis``), for ``program``: a
        one-candidate selection (:meth:`confirmer`): kept if it is smaller than -Oz here
        and passes the same checks as a list chosen here (the determinism check and the
        gate, with this unit's own link); else -Oz, with the verdict that stopped it."""
        about = f"{self.spec}: the list chosen for {basis}"
        candidate = Candidate(pipeline=choice.pipeline, run=choice.pipeline)
        selection = self.confirmer.select(program, [candidate])
        if selection.fallback is not None or not selection.validated:
            verdict = selection.fallback.value if selection.fallback is not None else "not validated"
            why = f"{about}: {verdict} here ({selection.detail}), -Oz kept"
            return Choice(OZ_PIPELINE, "oz", why + _TRANSIENT * selection.transient, selection.transient)
        return Choice(
            selection.chosen,
            "predicted",
            f"{about}: {selection.binary_size} {self.objective.unit} vs -Oz {selection.oz_size} here "
            f"(llc, {self.objective.value}), validated",
        )

    def choose(self, program: Program) -> Choice:
        (proposal,) = self.optimizer.propose([program])
        result = self.optimizer.decide(program.name, program, proposal)
        if result.fallback is not None:
            reason = f"{self.spec}: -Oz kept: {result.fallback.value}: {result.fallback_detail}"
            return Choice(OZ_PIPELINE, "oz", reason + _TRANSIENT * result.transient, result.transient)
        return Choice(
            result.chosen,
            "predicted",
            f"{self.spec}: {result.binary_size} {self.objective.unit} vs -Oz {result.oz_size} "
            f"(llc, {self.objective.value}), validated" + _TRANSIENT * result.transient,
            result.transient,
        )


#: Said of a choice that a timeout decided (:attr:`Choice.transient`).
_TRANSIENT = "; a list was rejected by a timeout, so this holds for this build only (not cached)"
