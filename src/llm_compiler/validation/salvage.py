"""Salvaging a rejected pass list: find the passes to blame, drop them, try again.

A list the :class:`~llm_compiler.validation.gate.Gate` rejects is rarely wrong as a
whole: one or two of its passes break a program (``attributor`` miscompiles a
recursive function, a list without an inliner leaves an inline-only library call).
:meth:`Salvager.culprits` finds a 1-minimal set of the list's top-level passes that
still fails the same check, with delta debugging
(:func:`~llm_compiler.validation.reduce.ddmin`): for a suite program, the program
still fails; for the target's own link, run or user check, that check still fails.
:meth:`Salvager.repairs` then drops those passes (every occurrence), giving the lists
the caller measures and checks again like any other candidate.

Blame found on a suite program depends on the list alone, not on the target, so it
is kept for the life of the salvager and reused for every target that had the same
list rejected by the same program.
"""

from __future__ import annotations

from collections.abc import Callable

from llm_compiler.core.program import Program
from llm_compiler.passes.pipeline import PassList, PassNode
from llm_compiler.validation.gate import Gate, GateResult
from llm_compiler.validation.reduce import ddmin

#: The most probes one search for culprits may spend (each is one compile, and for a
#: suite program or the target's own run, one link and run).
MAX_PROBES = 120


class Salvager:
    """Finds the passes that make a list fail a gate (module docstring).

    Args:
        gate: The gate whose checks are repeated on parts of the list.
        max_probes: The most checks one search for culprits may run.
    """

    def __init__(self, gate: Gate, max_probes: int = MAX_PROBES) -> None:
        self.gate = gate
        self.max_probes = max_probes
        self._suite_blame: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def _predicate(self, program: Program, result: GateResult) -> Callable[[PassList], bool] | None:
        gate = self.gate
        if result.check == "suite" and result.failure is not None and gate.evaluator is not None:
            failure = result.failure
            wanted = (failure.suite, failure.program)
            tests = [t for t in gate.evaluator.programs if (t.suite, t.name) == wanted]
            if not tests:
                return None
            test, evaluator = tests[0], gate.evaluator
            return lambda passes: evaluator.check_program(test, passes).outcome.is_failure
        if result.check == "linkage":
            return lambda passes: not gate.linkage.check(program, passes).passed
        if result.check == "program":
            return lambda passes: gate.differential.check(program, passes).outcome.is_failure
        if result.check == "user":
            return lambda passes: not gate.user_check_passes(program, passes)
        return None

    def culprits(self, program: Program, passes: PassList, result: GateResult) -> tuple[str, ...]:
        """The passes (pipeline elements) of ``passes`` to blame for ``result``.

        Returns an empty tuple when the failure cannot be narrowed down (the check is
        not repeatable, the failure did not reproduce, or the probe budget ran out
        before the first reduction), and for a rejection that rests on a timeout alone
        (``result.transient``): no pass is to blame for a busy machine.
        """
        if result.transient:
            return ()
        key = None
        if result.check == "suite" and result.failure is not None:
            key = (passes.pipeline, result.failure.suite, result.failure.program)
            if key in self._suite_blame:
                return self._suite_blame[key]
        fails = self._predicate(program, result)
        if fails is None:
            return ()
        probes = 0

        def still_fails(nodes: list[PassNode]) -> bool:
            nonlocal probes
            if probes >= self.max_probes:
                return False  # out of budget: keep what was narrowed down so far
            probes += 1
            return bool(nodes) and fails(PassList(tuple(nodes)))

        nodes = list(passes)
        blamed: tuple[str, ...] = ()
        if still_fails(nodes):
            blamed = tuple(dict.fromkeys(str(node) for node in ddmin(nodes, still_fails)))
            if len(blamed) == len(nodes) and len(nodes) > 1 and probes >= self.max_probes:
                blamed = ()
        if key is not None:
            self._suite_blame[key] = blamed
        return blamed

    @staticmethod
    def repairs(passes: PassList, culprits: tuple[str, ...]) -> list[PassList]:
        """``passes`` without every culprit, then without each culprit alone (when
        there are several), duplicates and empty lists left out."""
        variants = [set(culprits)] + ([{c} for c in culprits] if len(culprits) > 1 else [])
        lists: list[PassList] = []
        for dropped in variants:
            kept = tuple(node for node in passes if str(node) not in dropped)
            if kept and PassList(kept) not in lists and PassList(kept) != passes:
                lists.append(PassList(kept))
        return lists
