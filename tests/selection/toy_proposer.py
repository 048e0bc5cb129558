"""A toy source of lists, plugged in the way a new proposer is (one file, one registry line).

The registry line is ``toy=tests.selection.toy_proposer:make`` in ``LLM_COMPILER_PROPOSERS``
(inside the package it would be one line of ``PROPOSERS`` in
``llm_compiler/selection/registry.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.selection.proposer import ProposalRequest, Proposer
from llm_compiler.selection.registry import ProposerContext, Spec

#: What the toy proposes, in this order, whatever the program.
TOY_LISTS = (
    "function(gvn),function(loop(loop-reduce)),module(scc-oz-module-inliner)",
    # Beats -Oz on examples/qsort_ints.c (783 against 854 bytes with LLVM 19), so that a
    # command that ignored the toy's lists would be seen to keep -Oz.
    "module(scc-oz-module-inliner),function(reg2mem),function(mem2reg),module(mergefunc)",
    "function(simplifycfg),function(instcombine<no-verify-fixpoint>)",
)


@dataclass(frozen=True)
class FixedOrder(Proposer):
    """The same lists for every program."""

    lists: tuple[str, ...] = TOY_LISTS
    name: str = "toy"
    adaptive: ClassVar[bool] = False

    def ask(self, request: ProposalRequest) -> list[PassList]:
        return [parse_pipeline(text) for text in self.lists[request.start : request.start + request.count]]


def make(spec: Spec, context: ProposerContext) -> Proposer:
    """``toy[,k=N]``."""
    spec.refuse_options("k")
    return FixedOrder()
