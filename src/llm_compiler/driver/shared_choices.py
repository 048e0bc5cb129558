"""Units built twice: one choice for the unit with and without its position flags.

A project that makes a static and a shared library compiles each unit twice, the
second time with ``-fPIC``: the same code, IR that differs in its symbols' preemption
and metadata. With ``share_choices`` (the predictor's builds), the driver
(:mod:`llm_compiler.driver.cc`) has :func:`unit_choice` choose the list for the unit as
compiled without its position flags (one more front end), keep it in the cache by that
IR, and then measure and validate it for the ``-fPIC`` unit itself (the chooser's
``confirm``: the determinism check and the gate, with its own link): kept if it passes
and is smaller than -Oz there, else -Oz. Both compiles then share one selection,
whichever runs first, so ``make -j`` gives the objects of ``make -j1``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import asdict
from typing import TYPE_CHECKING, cast

from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.arguments import UnitCompile
from llm_compiler.driver.choose import Choice, Chooser
from llm_compiler.driver.records import completed
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS
from llm_compiler.toolchain.runner import CommandResult

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.driver.cache import ObjectCache


def unit_choice(
    *,
    compiler: Compiler,
    chooser: Chooser,
    unit: UnitCompile,
    program: Program,
    share: bool,
    basis_front: Future[CommandResult] | None,
    clang: Callable[[Sequence[str]], CommandResult],
    cache: ObjectCache | None,
    key: Callable[[Sequence[str], bytes], str | None],
) -> Choice:
    """The unit's choice; with ``share``, made once per IR (module docstring).

    Args:
        compiler: The unit's compiler (it reads the basis IR).
        chooser: The driver's chooser.
        unit: The unit compiled.
        program: The unit's own unoptimized IR.
        share: Whether choices are shared (``share_choices``); else ``chooser`` alone.
        basis_front: The front end of the unit without its position flags, when it
            runs already; else it is run here with ``clang``.
        clang: Runs clang with the given arguments.
        cache: Where a shared choice is kept (None: made for each compile).
        key: The driver's cache key of IR lowered with some flags.
    """
    if not share:
        return chooser.choose(program) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
    basis, about = program, ""
    if unit.position_flags:
        if basis_front is None:
            basis_front = completed(clang, [*unit.plain_arguments, *FRONTEND_FLAGS, "-o", "-"])
        front = basis_front.result()
        if front.returncode == 0:
            basis = compiler.load_ir(front.stdout_text, name=unit.source)
            about = f"the unit without {' '.join(unit.position_flags)}"
    made = key(("(a choice)", *unit.llvm_options), basis.ir.encode())  # None without a cache
    remembered = cache.choice(made) if cache is not None and made is not None else None
    if remembered is not None:
        choice = Choice(**remembered)
    else:
        choice = chooser.choose(basis) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
        if cache is not None and made is not None and not choice.transient:
            cache.remember_choice(made, asdict(choice))
    if basis is program or choice.pipeline == OZ_PIPELINE:
        return choice
    confirm = getattr(chooser, "confirm", None)
    if confirm is None:
        return Choice(OZ_PIPELINE, "oz", f"the list chosen for {about} could not be checked here")
    return cast(Choice, confirm(program, choice, about))
