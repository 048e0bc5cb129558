"""The driver's frame-pointer choice for a unit (:mod:`llm_compiler.core.frames`).

After :func:`~llm_compiler.driver.lowering.keep_smallest` has decided which object a
unit keeps (the chosen list's, -Oz's or clang's -Oz), :func:`unit_frames` (through
:func:`smaller_frames`) tries frame pointers in the functions of that
object's IR whose unwind entries they make smaller. The object made so is kept only
when it is smaller than the one kept, its lowering says what clang -Oz says, and it
passes :meth:`~llm_compiler.selection.select.Selector.check_object`: built again from
the IR, the same bytes; the target's own link, its own run and the user's check, as any
joined object. Otherwise the decided object stands and the log line says why.

A whole-program build's objects carry their unit's IR with the same functions given
the same attribute (:func:`carried_ir`), so its LTO links keep the choice.

No choice is made where the build's line decides frame pointers itself
(:data:`~llm_compiler.core.frames.USER_FRAME_FLAGS`), where the object has no unwind
tables (a frame pointer would only cost), or without a selection layer to check it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from llm_compiler.core.frames import FRAME_POINTER, choose_frames, user_decides_frames
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.diagnostics import Lowered, backend_messages
from llm_compiler.driver.records import UnitLog
from llm_compiler.errors import LlmCompilerError, reason_of
from llm_compiler.toolchain.elf import section_sizes
from llm_compiler.toolchain.ir import with_function_attribute

if TYPE_CHECKING:
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.selection import Selector


class _SaysOtherwise(LlmCompilerError):
    """A lowering with frame pointers said other than clang -Oz says."""


def smaller_frames(
    *,
    arguments: Sequence[str],
    program: Program,
    ir: str,
    obj: bytes,
    kept: bytes,
    log: UnitLog,
    lower: Callable[[str], Lowered],
    size: Callable[[bytes], int],
    selector: Selector | None,
    says: tuple[str, ...],
    known: bytes,
    link_cost: Callable[[bytes], int] = lambda obj: 0,
) -> tuple[bytes, UnitLog]:
    """The object to keep and its log line: ``kept`` as decided, or a smaller one with
    frame pointers in some functions (module docstring).

    Args:
        arguments: The build's line (its frame-pointer flags are the user's choice).
        program: The unit (for the selection layer's checks).
        ir: The optimized IR whose lowering is ``obj``: that of the list kept, or of
            -Oz when clang's own -Oz object is kept.
        obj: ``ir``'s object.
        kept: The object decided so far (``log.size`` is its size).
        log: The unit's log line so far.
        lower: Lowers IR as the kept object was lowered.
        size: The driver's objective.
        selector: Checks the object made (None: no choice is made).
        says: What clang -Oz's lowering said (its backend diagnostics).
        known: The front end's stderr (diagnostics it printed already).
        link_cost: What the link adds for an object (its dynamic relocations,
            :func:`~llm_compiler.driver.lowering.link_cost`): objects are compared with it
            added, as :func:`~llm_compiler.driver.lowering.keep_smallest` compares them.
    """
    if selector is None or log.size is None or user_decides_frames(list(arguments)):
        return kept, log
    try:
        if not section_sizes(kept)[".eh_frame"]:
            return kept, log
    except LlmCompilerError:  # not ELF: no breakdown, no choice
        return kept, log

    def lowered(text: str) -> bytes:
        result = lower(text)
        if backend_messages(result.stderr, known) != says:
            raise _SaysOtherwise("the lowering with frame pointers says other than clang -Oz's")
        return result.obj

    def cost(made: bytes) -> int:
        return size(made) + link_cost(made)

    try:
        choice = choose_frames(ir, obj, lowered, cost)
    except Exception as error:  # a failure of the attempt leaves the decided object
        return kept, replace(log, reason=f"{log.reason}; frame pointers not tried: {reason_of(error)}")
    if choice is None or choice.size >= log.size + link_cost(kept):
        return kept, log
    made_size = size(choice.obj)
    check = selector.check_object(
        program,
        lambda: choice.obj,
        f"{log.pipeline or 'default<Oz>'} with {choice.note}",
        again=lambda: lowered(choice.ir),
    )
    if check.verdict.is_failure:
        why = f"{log.reason}; {choice.note} ({made_size}): {check.verdict}: {check.detail[:200]}"
        return kept, replace(log, reason=why)
    note = f"{choice.note}: {log.size} -> {made_size} ({check.verdict})"
    return choice.obj, replace(log, size=made_size, frames=note, frame_functions=choice.functions)


def carried_ir(ir: bytes | None, functions: Sequence[str]) -> bytes | None:
    """The unoptimized IR a whole-program object carries: the unit's, with the frame
    pointers its object was given in the same functions, so that the links made from
    it (:mod:`llm_compiler.driver.whole_program`) keep the choice."""
    if ir is None or not functions:
        return ir
    return with_function_attribute(ir.decode(), FRAME_POINTER, set(functions)).encode()


def unit_frames(
    *,
    compiler: Compiler,
    selector: Selector | None,
    arguments: Sequence[str],
    program: Program,
    log: UnitLog,
    kept: bytes,
    known: bytes,
    lower: Callable[[str], Lowered],
    size: Callable[[bytes], int],
    link_cost: Callable[[bytes], int] = lambda obj: 0,
) -> tuple[bytes, UnitLog]:
    """The driver's step after its decision (:func:`~llm_compiler.driver.lowering.keep_smallest`):
    ``kept``, or a smaller object with frame pointers (:func:`smaller_frames`), made from the
    IR of the list kept (-Oz's when clang's own -Oz object is kept).

    Args:
        compiler: Ran the lists (their IR is kept: no list runs again).
        selector: Checks the object made (None: no choice is made).
        arguments: The build's line.
        program: The unit.
        log: The unit's log line so far.
        kept: The object decided so far.
        known: The front end's stderr.
        lower: Lowers IR as the kept object was lowered.
        size: The driver's objective.
        link_cost: What the link adds for an object (:func:`smaller_frames`).
    """
    pipeline = log.pipeline if log.kept == "chosen" else OZ_PIPELINE
    ir = compiler.optimize(program, compiler.passes(pipeline))  # measured already: kept IR
    obj, made = smaller_frames(
        arguments=arguments,
        program=program,
        ir=ir,
        obj=kept,
        kept=kept,
        log=log,
        lower=lower,
        size=size,
        selector=selector,
        says=(),
        known=known,
        link_cost=link_cost,
    )
    if made.frames and log.kept == "clang-oz":  # made from default<Oz>'s IR, not clang's object
        made = replace(made, kept="oz")
    return obj, made
