"""Auditing the searchable set: which passes break programs on their own.

Every member of the searchable set is checked twice on every program of the suites
with :class:`~llm_compiler.validation.passlisteval.PassListEval`: alone (on the
unoptimized IR) and after ``default<Oz>``. A member with a failure other than a link
failure (wrong output, crash, non-zero exit, timeout, a compiler failure) is unsafe;
the failures are its evidence. Link failures are recorded apart: whether one can
happen depends on the target, which the gate's linkage check decides.

Checks reuse verdicts by optimized-IR hash, so a pass that leaves a program as
another pass did costs only its compile. The result is a
:class:`~llm_compiler.passes.safety.SafetyReport`, written by ``llm-compiler passes
--audit`` and read by :func:`~llm_compiler.passes.safety.search_pass_set`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.safety import Evidence, SafetyReport
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.suites import Suite

#: How each member is tried: alone, and after -Oz.
MODES = (("alone", ""), ("after-oz", OZ_PIPELINE))


def audit_pass_set(
    compiler: Compiler,
    suites: Sequence[Suite],
    *,
    members: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SafetyReport:
    """Checks each member alone and after -Oz on every program of ``suites``.

    Args:
        compiler: The compiler (its pass set is audited).
        suites: The suites to run.
        members: Only these members (default: the whole searchable set).
        progress: Called with (lists checked, lists in all).
    """
    members = tuple(members if members is not None else compiler.pass_set.members)
    evaluator = PassListEval(compiler, suites)
    lists = [(member, mode, compiler.passes(f"{prefix},{member}" if prefix else member))
             for member in members for mode, prefix in MODES]  # fmt: skip
    evidence: list[Evidence] = []
    link_failures: list[Evidence] = []
    done = 0

    def check(item: tuple[str, str, PassList]) -> tuple[str, str, list[Evidence]]:
        member, mode, passes = item
        found = []
        for test in evaluator.programs:
            result = evaluator.check_program(test, passes)
            if result.outcome.is_failure:
                program = f"{test.suite}/{test.name}"
                outcome, detail = str(result.outcome), result.detail[:300]
                found.append(Evidence(member, mode, program, outcome, detail, result.command))
        return member, mode, found

    try:
        # Lists in parallel: each checks its programs one by one, so that a pass
        # costs only the programs whose IR it changed in a new way.
        with ThreadPoolExecutor(max_workers=evaluator.jobs) as pool:
            for _member, _mode, found in pool.map(check, lists):
                for item in found:
                    (link_failures if item.outcome == str(Outcome.LINK_FAIL) else evidence).append(item)
                done += 1
                if progress is not None:
                    progress(done, len(lists))
    finally:
        evaluator.close()
    return SafetyReport(
        llvm_version=compiler.llvm_version,
        suites={suite.name: suite.version for suite in suites},
        checked=members,
        evidence=tuple(evidence),
        link_failures=tuple(link_failures),
    )
