"""What a search minimizes: the objective every size comparison of a run is made in.

* ``binary-size`` (the default, LLM Compiler's): ``.text + .data`` of the object, in
  bytes, the Berkeley figure of ``llvm-size``;
* ``text-size``: ``.text`` alone (code and read-only data), in bytes, for targets
  where writable data lives elsewhere or costs nothing;
* ``ir-instructions``: instructions in the optimized IR's function bodies, the
  metric of CompilerGym and most published work on pass ordering. It needs no code
  generation, so a search in it lowers nothing: the compiler counts the IR
  (:meth:`~llm_compiler.core.compiler.Compiler.count`) and only the lists validation
  checks are lowered (the gate links and runs objects whatever the objective).

One objective holds for a whole run: the search, the comparison with ``-Oz``, the
determinism check ("a second compile gives the same value"), the kept result and the
report all use it, and reports name it. "Never worse than -Oz" is then meant in
that objective.
"""

from __future__ import annotations

import difflib
import enum
from typing import Protocol

from llm_compiler.errors import InvalidInput


class _Sized(Protocol):
    @property
    def text(self) -> int | None: ...
    @property
    def binary_size(self) -> int | None: ...
    @property
    def ir_instructions(self) -> int: ...


class Objective(enum.StrEnum):
    """The quantity a run minimizes (module docstring)."""

    BINARY_SIZE = "binary-size"
    TEXT_SIZE = "text-size"
    IR_INSTRUCTIONS = "ir-instructions"

    @classmethod
    def parse(cls, value: str | Objective) -> Objective:
        """The objective named ``value``.

        Raises:
            InvalidInput: No objective has that name (the error suggests the nearest).
        """
        try:
            return cls(value)
        except ValueError:
            names = [objective.value for objective in cls]
            near = difflib.get_close_matches(str(value), names, n=1, cutoff=0.5)
            hint = f" Did you mean {near[0]}?" if near else ""
            raise InvalidInput(
                f"Unknown objective {value!r}; choose one of {', '.join(names)}.{hint}"
            ) from None

    @property
    def needs_object(self) -> bool:
        """Whether measuring it needs code generation (an object file)."""
        return self is not Objective.IR_INSTRUCTIONS

    @property
    def unit(self) -> str:
        """``"bytes"`` or ``"instructions"``."""
        return "instructions" if self is Objective.IR_INSTRUCTIONS else "bytes"

    @property
    def description(self) -> str:
        """What it measures, in words, for reports."""
        return {
            Objective.BINARY_SIZE: "binary size (.text + .data bytes of the object)",
            Objective.TEXT_SIZE: "text size (.text bytes of the object)",
            Objective.IR_INSTRUCTIONS: "IR instruction count (instructions of the optimized IR)",
        }[self]

    def of(self, measured: _Sized) -> int:
        """The objective's value of a measurement (or anything with its three fields).

        Raises:
            ValueError: The measurement has no object sizes and the objective needs them.
        """
        if self is Objective.IR_INSTRUCTIONS:
            return int(measured.ir_instructions)
        value = measured.text if self is Objective.TEXT_SIZE else measured.binary_size
        if value is None:
            raise ValueError(f"{self.value} needs an object file; this measurement counted IR only")
        return int(value)

    def amount(self, value: int | float) -> str:
        """``value`` with its unit, e.g. ``"1,204 bytes"``."""
        return f"{int(value):,} {self.unit}"


#: The paper's objective, the default everywhere.
DEFAULT_OBJECTIVE = Objective.BINARY_SIZE
