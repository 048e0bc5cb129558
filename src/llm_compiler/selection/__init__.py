"""The selection layer: the one way from a proposed pass list to a kept, validated result.

Above :mod:`llm_compiler.validation` and below every command: ``tune``'s search,
``optimize``, ``evaluate``, the ``cc`` driver and fixed lists hand their candidates to
:class:`Selector` (:mod:`llm_compiler.selection.select`), which measures them,
validates the smaller ones smallest first after a determinism check, salvages rejected
lists, treats lists with the same optimized IR as the same list, and returns a
:class:`Selection` whose verdicts come from one closed vocabulary
(:class:`~llm_compiler.selection.outcomes.Verdict`). A whole-program link, made by
lld from a joined module, is decided by :class:`LinkJudge`
(:mod:`llm_compiler.selection.links`). Sources of lists (models, the built-in
predictor, searches) only propose; nothing but this layer calls validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.searchable import load_pass_set
from llm_compiler.selection.links import LinkCheck, LinkJudge, makes_program
from llm_compiler.selection.outcomes import Verdict
from llm_compiler.selection.select import (
    MAX_REJECTIONS,
    MAX_REPAIRS,
    Candidate,
    Measurer,
    ObjectCheck,
    Policy,
    Rejection,
    Selection,
    Selector,
    fallback_reason,
)
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.gate import Gate, load_suites
from llm_compiler.validation.suites import builtin_suite


def make_gate(
    compiler: Compiler,
    suites: Sequence[str] = ("builtin",),
    user_check: str | None = None,
    cache_dir: Path | None = None,
) -> Gate:
    """The gate lists must pass: the target's link, PassListEval on ``suites`` (names as
    :func:`~llm_compiler.validation.gate.load_suites` reads them), the target's own run
    and the user's ``--check``.

    Raises:
        InvalidInput: An unknown suite name or an unreadable suite file.
    """
    return Gate(compiler, load_suites(list(suites), compiler, cache_dir), user_check, cache_dir)


def preload(toolchain: Toolchain) -> None:
    """Reads what every selection on ``toolchain`` reads again, once for the process: its
    pass registry and searchable pass set (``opt --print-passes``) and the built-in
    validation suite. A long-lived process (the compile server) calls it before it
    forks its commands."""
    load_pass_set(toolchain)
    builtin_suite()


__all__ = [
    "MAX_REJECTIONS",
    "MAX_REPAIRS",
    "Candidate",
    "Gate",
    "LinkCheck",
    "LinkJudge",
    "Measurer",
    "ObjectCheck",
    "Policy",
    "Rejection",
    "Selection",
    "Selector",
    "Verdict",
    "fallback_reason",
    "make_gate",
    "makes_program",
    "preload",
]
