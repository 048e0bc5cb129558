"""Frame pointers where they make code smaller: unwind tables that cost less.

At ``-Oz`` on x86-64 a function's frame is addressed from the stack pointer, and every
``push``/``pop`` (saved registers, and small constants, which ``-Oz`` materializes as
``push $imm; pop reg``) moves the canonical frame address: with asynchronous unwind
tables each one adds a ``DW_CFA_def_cfa_offset`` to the function's entry in
``.eh_frame``. With a frame pointer the frame is addressed from ``rbp`` and those
entries go: the prologue costs a few bytes of code, the unwind entry shrinks. Which is
smaller depends on the function, so :func:`choose_frames` measures it:

1. the unit lowered as it is (the caller's object) and with a frame pointer in every
   non-leaf function (``"frame-pointer"="non-leaf"``, what ``-fno-omit-frame-pointer
   -momit-leaf-frame-pointer`` sets);
2. each function's cost in both (its code and its unwind entry,
   :func:`~llm_compiler.toolchain.elf.function_costs`); the functions cheaper with a
   frame pointer get one, the others not, and that mix is lowered too;
3. the smallest of the three objects, when it is smaller than the unit's own.

Nothing a debugger or unwinder relies on is lost: unwind tables stay complete and
exact, and a frame pointer only adds a way to walk the stack. Functions a frame pointer
could break are left alone: those with inline assembly (which may use ``rbp``), naked
ones, and those whose attributes already say how to treat the frame pointer (the
user's ``-fno-omit-frame-pointer`` or ``-fomit-frame-pointer``, which callers also honour
by not calling this at all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llm_compiler.toolchain.elf import function_costs
from llm_compiler.toolchain.ir import defined_functions, functions_with_inline_asm, with_function_attribute

#: The attribute given to the functions chosen (``-fno-omit-frame-pointer -momit-leaf-frame-pointer``).
FRAME_POINTER = '"frame-pointer"="non-leaf"'

#: Flags of a build's line that decide frame pointers themselves: then no choice is made.
USER_FRAME_FLAGS = (
    "-fomit-frame-pointer",
    "-fno-omit-frame-pointer",
    "-momit-leaf-frame-pointer",
    "-mno-omit-leaf-frame-pointer",
    "-pg",
)


@dataclass(frozen=True)
class FrameChoice:
    """A smaller object made by giving some functions a frame pointer.

    Attributes:
        ir: The IR lowered (the unit's with the attribute added where chosen).
        obj: Its object.
        size: The object's size in the caller's measure.
        functions: The functions given a frame pointer.
        defined: Functions the unit defines.
    """

    ir: str
    obj: bytes
    size: int
    functions: tuple[str, ...]
    defined: int

    @property
    def note(self) -> str:
        """For logs: which functions got a frame pointer."""
        return f"frame pointer in {len(self.functions)} of {self.defined} functions"


def user_decides_frames(arguments: tuple[str, ...] | list[str]) -> bool:
    """Whether a build's line chooses frame pointers itself (:data:`USER_FRAME_FLAGS`)."""
    return any(argument in USER_FRAME_FLAGS for argument in arguments)


def choose_frames(
    ir: str, obj: bytes, lower: Callable[[str], bytes], size: Callable[[bytes], int]
) -> FrameChoice | None:
    """The smallest object of ``ir`` with frame pointers in some functions (module
    docstring), or None when none is smaller than ``obj``.

    Args:
        ir: The unit's optimized IR, whose lowering is ``obj``.
        obj: The unit's object as it would be kept.
        lower: Lowers IR to an object the way ``obj`` was lowered (raises when LLVM fails).
        size: The measure the choice minimizes (the caller's objective).
    """
    defined = defined_functions(ir)
    allowed = set(defined) - functions_with_inline_asm(ir)
    every = with_function_attribute(ir, FRAME_POINTER, allowed)
    if every == ir:
        return None
    base_size = size(obj)
    every_obj = lower(every)
    candidates = [FrameChoice(every, every_obj, size(every_obj), tuple(sorted(allowed)), len(defined))]
    before, after = function_costs(obj), function_costs(every_obj)
    if before is not None and after is not None:
        cheaper = {
            name for name in allowed if name in before and name in after and after[name] < before[name]
        }
        if cheaper and cheaper != allowed:
            mixed = with_function_attribute(ir, FRAME_POINTER, cheaper)
            mixed_obj = lower(mixed)
            candidates.append(
                FrameChoice(mixed, mixed_obj, size(mixed_obj), tuple(sorted(cheaper)), len(defined))
            )
    best = min(candidates, key=lambda choice: (choice.size, len(choice.functions)))
    return best if best.size < base_size else None
