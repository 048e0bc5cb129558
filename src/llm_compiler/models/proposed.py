"""Any proposer's first lists for a unit, measured and validated as a model's answers are.

A few lists per unit, -Oz beside them, the smallest validated one kept: that is how a
model is scored, and it is also how the cheap alternatives to a model must be scored
to be compared with it fairly. :class:`ProposerOptimizer` asks any
:class:`~llm_compiler.selection.proposer.Proposer` for its first ``count`` lists of each
unit (a non-adaptive proposer: random lists, a fixed ranking of known good lists, the
built-in predictor's ranking) and hands them to the same measurement, gate and choice
as :class:`~llm_compiler.models.optimize.ModelOptimizer`. Lists the proposer gives that
the installed LLVM does not accept are recorded as ``unknown-pass``; ``default<Oz>``
itself is not a candidate (it is the baseline every unit gets anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import InvalidPassList
from llm_compiler.models.optimize import ListOptimizer, Proposal
from llm_compiler.passes.safety import search_pass_set
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.passes.searchable import PassSet
from llm_compiler.selection import Candidate, Gate, Policy, Verdict
from llm_compiler.selection.proposer import ProposalRequest, Proposer
from llm_compiler.selection.registry import ProposerContext, first_count, make_proposer


@dataclass
class ProposerOptimizer(ListOptimizer):
    """Lists ``start`` .. ``start + count - 1`` of ``proposer`` for each unit, then the usual choice.

    Args:
        compiler: Measures every list.
        proposer: Proposes the lists (asked once per unit, with no history).
        gate: Validates lists smaller than -Oz.
        pass_set: The pass set handed to the proposer.
        count: Lists asked per unit.
        name: The name records carry, e.g. ``random:10``.
        start: The index of the first list asked (random search's list 0 is -Oz).
        jobs: Candidates measured at once.
        policy: How the selection layer chooses (None: its default).
    """

    compiler: Compiler
    proposer: Proposer
    gate: Gate
    pass_set: PassSet
    count: int
    name: str
    start: int = 0
    jobs: int = 1
    policy: Policy | None = None

    @property
    def spec(self) -> str:
        return self.name

    def propose(self, programs: Sequence[Program]) -> list[Proposal]:
        proposals = []
        for program in programs:
            candidates: list[Candidate] = []
            start = self.start
            # -Oz is the baseline every unit gets, not a candidate: asked past, not counted.
            while len(candidates) < self.count:
                wanted = self.count - len(candidates)
                lists = self.proposer.ask(ProposalRequest(program, self.pass_set, start, wanted))[:wanted]
                start += wanted
                texts = [str(passes) for passes in lists]
                candidates += [_candidate(self.compiler, text) for text in texts if text != OZ_PIPELINE]
                if len(lists) < wanted or OZ_PIPELINE not in texts:
                    break
            proposals.append(Proposal(tuple(candidates)))
        return proposals


def proposer_optimizer(
    compiler: Compiler,
    gate: Gate,
    spec: str,
    jobs: int = 1,
    *,
    seed: int = 0,
    max_length: int = MAX_LIST_LENGTH,
    pass_set: str = "safe",
    objective: Objective = DEFAULT_OBJECTIVE,
) -> ProposerOptimizer:
    """``optimize`` and ``evaluate`` with any registered source of lists (``builtin``,
    ``common:N``, ``random:N``...): its first k lists per unit, -Oz, the selection layer.

    Raises:
        InvalidInput: An unknown or malformed spec, or a proposer that cannot be made here
            (a ranker trained for another LLVM...).

    ``objective`` is what "smaller" means for the selection (binary size by default).
    """
    proposer, parsed = make_proposer(spec, ProposerContext(compiler, "first", seed, max_length))
    count = first_count(parsed)
    return ProposerOptimizer(
        compiler,
        proposer,
        gate,
        search_pass_set(compiler.toolchain, pass_set),
        count,
        spec,
        jobs=jobs,
        policy=Policy(jobs=jobs, objective=objective),
    )


def _candidate(compiler: Compiler, pipeline: str) -> Candidate:
    """A proposed list, checked by the pass-list gate."""
    try:
        run = compiler.passes(pipeline).pipeline
    except InvalidPassList as error:
        return Candidate("", pipeline=pipeline, verdict=Verdict.UNKNOWN_PASS, detail=str(error))
    return Candidate("", pipeline=pipeline, run=run)
