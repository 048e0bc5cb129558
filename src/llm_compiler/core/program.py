"""The values every layer above the toolchain passes around: programs and what compiling made.

A :class:`Program` is unoptimized IR with a stable id (the hash of its text). A
:class:`Measurement` is the code size of one program after one pipeline, measured as
LLM Compiler measures it. A :class:`CompileResult` is everything one compile of a
candidate produced: the measurement and, when asked for, the optimized IR, the
assembly and the object file, so that no caller compiles the same list twice to get
them.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

OZ_PIPELINE = "default<Oz>"
O0_PIPELINE = "default<O0>"
_MODULE_ID_COMMENT = "; ModuleID = "
_SOURCE_FILENAME = re.compile(r'^source_filename = "([^"\n]*)"$', re.MULTILINE)


def _without_directory(match: re.Match[str]) -> str:
    name = match.group(1).replace("\\5C", "/").rsplit("/", 1)[-1]
    return f'source_filename = "{name}"'


@dataclass(frozen=True)
class Program:
    """Unoptimized IR of one translation unit (or function), with where it came from.

    Attributes:
        name: A human-readable name, usually the source path.
        ir: The unoptimized textual IR.
        language: ``"c"``, ``"c++"`` or ``"ir"`` (loaded from a .ll/.bc file).
        source: The file it was made from, if any.
    """

    name: str
    ir: str
    language: str = "ir"
    source: str | None = None

    @functools.cached_property
    def id(self) -> str:
        """Stable id: the first 16 hex digits of the SHA-256 of the IR text.

        A first ``; ModuleID = ...`` line is left out: LLVM prints there the name it
        read the module from (a path, ``<stdin>``), which is a comment when the text is
        read back. The directory in ``source_filename`` is left out too: clang writes
        there the path it was given, often absolute, and it changes nothing the IR
        does. The same IR therefore has the same id wherever its file lies, and a
        search seeded by the id draws the same lists in every clone.
        """
        text = self.ir
        if text.startswith(_MODULE_ID_COMMENT):
            text = text.partition("\n")[2]
        text = _SOURCE_FILENAME.sub(_without_directory, text, count=1)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @functools.cached_property
    def text_key(self) -> str:
        """The hash of the exact IR text, ``; ModuleID`` line and paths included.

        Workers keep programs by this key, not by :attr:`id`: two files with the same
        code in different folders share an id, but their texts (and so the optimized
        texts whose hashes the determinism check compares) differ in ``source_filename``.
        """
        return hashlib.sha256(self.ir.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Measurement:
    """Code size of one program after one pipeline.

    Attributes:
        pipeline: The ``opt -passes=`` text, or None for the unoptimized input.
        binary_size: ``text + data`` of the object file, in bytes.
        text: Berkeley text (code and read-only data) in bytes.
        data: Berkeley data (initialized writable data) in bytes.
        ir_instructions: Instructions in the IR's function bodies.
        llvm_version: The LLVM that produced it.
        ir_hash: Hash of the optimized IR text (lists with the same output share it);
            not part of equality, as engines may print unoptimized IR differently.
    """

    pipeline: str | None
    binary_size: int
    text: int
    data: int
    ir_instructions: int
    llvm_version: str
    ir_hash: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.binary_size != self.text + self.data:
            raise ValueError("binary_size must equal text + data")
        if min(self.text, self.data, self.ir_instructions) < 0:
            raise ValueError("sizes cannot be negative")

    def to_json(self) -> dict[str, Any]:
        """The measurement as the JSON object of ``llm-compiler measure --json``."""
        return {
            "pipeline": self.pipeline,
            "binary_size": self.binary_size,
            "text": self.text,
            "data": self.data,
            "ir_instructions": self.ir_instructions,
        }


@dataclass(frozen=True)
class IRCount:
    """The instruction count of one program after one pipeline, with no code generated.

    What an ``ir-instructions`` search measures (:mod:`llm_compiler.core.objective`):
    the pipeline runs and the optimized IR is counted and hashed, but not lowered, so
    there are no object sizes (``text`` and ``binary_size`` are None).

    Attributes:
        pipeline: The ``opt -passes=`` text, or None for the unoptimized input.
        ir_instructions: Instructions in the IR's function bodies.
        llvm_version: The LLVM that produced it.
        ir_hash: Hash of the optimized IR text (the same as a full measurement's).
    """

    pipeline: str | None
    ir_instructions: int
    llvm_version: str
    ir_hash: str = field(default="", compare=False)
    text: None = field(default=None, init=False, compare=False)
    data: None = field(default=None, init=False, compare=False)
    binary_size: None = field(default=None, init=False, compare=False)


@dataclass(frozen=True)
class CompileResult:
    """What one compile of a program with one pipeline produced.

    Attributes:
        measurement: Sizes and instruction count (always there).
        ir: The optimized IR text, when asked for.
        assembly: The assembly ``llc`` writes, when asked for.
        obj: The object file, when asked for.
    """

    measurement: Measurement
    ir: str | None = None
    assembly: str | None = None
    obj: bytes | None = None
