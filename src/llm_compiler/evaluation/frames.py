"""``SYSTEM+frames``: a system's rows with the driver's frame-pointer choice applied.

``llm-compiler cc`` keeps a unit's object with frame pointers in the functions where
that makes it smaller (:mod:`llm_compiler.core.frames`, :mod:`llm_compiler.driver.frames`).
So that ``evaluate`` measures what a build keeps, any system may be named with
``+frames`` (``tune:100+frames``, ``oz+frames``): each of its rows is taken, the object of
the row's chosen pipeline is lowered again with frame pointers where they pay, and the
smaller object replaces the row's ``size`` only when it passes
:meth:`~llm_compiler.selection.select.Selector.check_object` (built again from the IR, the
same bytes; the target's own link and its own run). The row's ``frames`` says which
functions got a frame pointer and the size before and after, so what the list alone
gave is still seen. Rows of GCC's systems and failures are passed on as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from llm_compiler.core.frames import choose_frames
from llm_compiler.core.program import Program
from llm_compiler.errors import LlmCompilerError
from llm_compiler.toolchain.elf import berkeley_size, section_sizes

if TYPE_CHECKING:
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.evaluation.results import Row
    from llm_compiler.selection import Selector

#: What a system's name ends with to have the frame-pointer choice applied.
SUFFIX = "+frames"


def with_frames(
    row: Row, program: Program, compiler: Compiler, selector: Selector, size: Callable[[bytes], int]
) -> Row:
    """``row`` with the frame-pointer choice applied to its chosen pipeline's object
    (module docstring); as it is where no smaller object passes the checks."""
    if row.size is None or row.outcome == "gcc":
        return row
    try:
        passes = compiler.passes(row.pipeline)
        ir = compiler.optimize(program, passes)
        obj = compiler.object_code(program, passes)[0]

        def lower(text: str) -> bytes:
            return compiler.lower(text, name=program.name)

        choice = choose_frames(ir, obj, lower, size)
        if choice is None or choice.size >= row.size:
            return row
        check = selector.check_object(
            program, lambda: choice.obj, f"{row.pipeline} with {choice.note}", again=lambda: lower(choice.ir)
        )
    except LlmCompilerError:  # the row stands: what the list alone gave
        return row
    if check.verdict.is_failure:
        return row
    return replace(
        row,
        size=choice.size,
        frames=f"{choice.note}: {row.size} -> {choice.size}",
        sections=section_sizes(choice.obj),
        compiles=row.compiles + 3,
    )


def binary_or_text(objective_value: str) -> Callable[[bytes], int]:
    """The size of an object in a byte objective (``text-size`` or ``binary-size``)."""
    if objective_value == "text-size":
        return lambda obj: berkeley_size(obj).text
    return lambda obj: berkeley_size(obj).binary_size
