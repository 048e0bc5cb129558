"""What a flag-tuning evaluation gives for each unit and system: a row, or a failure.

Each (unit, system) gives a :class:`Row`:

* ``zero_shot_size``: the system's first answer applied as it is, larger than -Oz or
  not (the paper's zero-shot figure); -Oz's size when that answer could not be used
  (unreadable, unknown passes, a compile failure, rejected by validation);
* ``size``: with "-Oz backup": the smallest *validated* result, never above -Oz;
* ``unvalidated_size``: the smallest size found before validation, reported apart and
  never mixed into the headline;
* ``outcome``: ``improved``, ``oz`` (nothing smaller) or why the answer was not used;
* a model's predicted sizes beside the measured ones, for the MAPE of predictions;
* ``sections``: where the size is, by group of sections
  (:func:`~llm_compiler.toolchain.elf.section_sizes`: ``.text``, ``.eh_frame``,
  ``.rodata``, ``.data``, ``other``; they sum to the binary size): of GCC's object, or of
  the object of the row's chosen pipeline (None where the object is not ELF; rows
  written before sections were recorded read back as None).

A unit a system cannot be run on (IR this LLVM cannot read, a crash of opt or llc, an
object no reader here knows, a check that cannot read the unit's objects, a unit the
autotuner stopped on) gives a :class:`Failure` instead: the unit, the system and the
reason with its fix. The other units go on; a model's backend failing
(:class:`~llm_compiler.models.base.ModelError`) still ends the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from llm_compiler.errors import LlmCompilerError


@dataclass(frozen=True)
class Row:
    """One unit under one system (a line of ``results.jsonl``; fields in the module docstring)."""

    unit: str
    package: str
    system: str
    oz_size: int
    unoptimized_size: int
    zero_shot_size: int
    size: int
    validated: bool
    unvalidated_size: int | None
    outcome: str
    pipeline: str
    predicted_before: int | None = None
    predicted_after: int | None = None
    measured_after: int | None = None
    compiles: int = 0
    seconds: float = 0.0
    task: str = "flag-tuning"
    sections: dict[str, int] | None = None
    frames: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Row:
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in record.items() if key in names})


@dataclass(frozen=True)
class Failure:
    """A unit one system could not be run on (a line of ``errors.jsonl``), with the reason.

    Attributes:
        unit, package, system: As in :class:`Row`.
        error: What stopped it, in one paragraph, with the fix where one is known.
        exception: The error itself (not written), for a run of a single unit to raise.
    """

    unit: str
    package: str
    system: str
    error: str
    status: str = "error"
    task: str = "flag-tuning"
    exception: LlmCompilerError | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "exception"}
