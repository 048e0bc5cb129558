"""Measuring code exactly as LLM Compiler does: apply a pass list, lower, count.

A :class:`Program` is unoptimized IR with a stable id (the hash of its text). The
:class:`Compiler` applies a pass list with ``opt -passes=<pipeline>``, lowers the
result to an x86-64 (or the module's target) object with ``llc -filetype=obj`` at
llc's default code-generation level (the IR's ``minsize``/``optsize`` attributes
steer it), and returns a :class:`Measurement`:

* ``binary_size`` = ``text`` + ``data`` in the Berkeley sense of ``llvm-size``
  (:mod:`llm_compiler.toolchain.elf`), read from the object's section headers;
* ``ir_instructions``, the instruction count of the optimized IR
  (:mod:`llm_compiler.toolchain.ir`).

The pipeline ``opt -passes=P | llc -filetype=obj | llvm-size`` run by hand gives the
same figures (the tests check it). "Unoptimized" means the front-end IR lowered as
is; ``-Oz`` means the pipeline ``default<Oz>``. Every pass list goes through the
:class:`~llm_compiler.passes.searchable.PassSet` gate before ``opt`` sees it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet, load_pass_set
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.frontend import FrontendOptions, emit_ir, language_of
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.runner import run_command

#: Default per-process time limit (LLM Compiler dropped pass lists taking over 120 s).
DEFAULT_TIMEOUT = 120.0

OZ_PIPELINE = "default<Oz>"
O0_PIPELINE = "default<O0>"


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

    @property
    def id(self) -> str:
        """Stable id: the first 16 hex digits of the SHA-256 of the IR text."""
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
    """

    pipeline: str | None
    binary_size: int
    text: int
    data: int
    ir_instructions: int
    llvm_version: str

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


class Compiler:
    """Applies pass lists to programs and measures them with one LLVM toolchain.

    Args:
        toolchain: The LLVM to use; found with :func:`find_toolchain` when None.
        timeout: Seconds each LLVM process may run before it is killed.
        allow_extra: Passes outside the searchable set that pass lists may use.

    Example:
        >>> compiler = Compiler()  # doctest: +SKIP
        >>> program = compiler.load(Path("examples/crc32.c"))  # doctest: +SKIP
        >>> compiler.measure(program, compiler.passes("module(default<Oz>)")).binary_size  # doctest: +SKIP
    """

    def __init__(
        self,
        toolchain: Toolchain | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        allow_extra: Iterable[str] = (),
    ) -> None:
        self.toolchain = toolchain or find_toolchain()
        self.timeout = timeout
        self.allow_extra = tuple(allow_extra)

    @property
    def llvm_version(self) -> str:
        return self.toolchain.version

    @property
    def pass_set(self) -> PassSet:
        """The searchable pass set of this toolchain (the pass-list gate)."""
        return load_pass_set(self.toolchain)

    def passes(self, text: str) -> PassList:
        """Parses and validates pipeline text against the searchable set.

        Raises:
            InvalidPassList: See :meth:`PassSet.validate`.
        """
        return self.pass_set.parse(text, self.allow_extra)

    # Loading -----------------------------------------------------------------

    def load(self, path: Path, options: FrontendOptions | None = None) -> Program:
        """Loads a C/C++ source (through the front end) or a .ll/.bc file.

        Raises:
            InvalidInput: Missing file, unknown kind, source that does not compile,
                or IR that LLVM cannot read.
        """
        language = language_of(path)
        if language == "ir":
            if not path.is_file():
                raise InvalidInput(f"{path}: no such file.")
            return self._load_ir_file(path)
        ir = emit_ir(self.toolchain, path, options, timeout=self.timeout)
        return Program(name=str(path), ir=ir, language=language, source=str(path))

    def load_ir(self, ir: str, name: str = "<ir>") -> Program:
        """Checks IR text with LLVM's parser and verifier and wraps it as a Program.

        Raises:
            InvalidInput: LLVM cannot parse or verify the text.
        """
        text = self._read_ir([self.toolchain.tool("opt"), "-S", "-o", "-", "-"], ir.encode(), name)
        return Program(name=name, ir=text, language="ir")

    def _load_ir_file(self, path: Path) -> Program:
        text = self._read_ir([self.toolchain.tool("opt"), "-S", "-o", "-", path], None, str(path))
        return Program(name=str(path), ir=text, language="ir", source=str(path))

    def _read_ir(self, command: list[Any], data: bytes | None, name: str) -> str:
        try:
            result = run_command(command, timeout=self.timeout, input=data, subject=name)
        except CommandFailed as error:
            if error.crashed:
                raise
            detail = next((line for line in error.stderr.splitlines() if "error" in line), "")
            raise InvalidInput(
                f"{name} is not valid LLVM-IR for LLVM {self.llvm_version}: "
                f"{detail.strip() or error.stderr.strip()[:300]}. IR written by a newer LLVM "
                "than this one cannot be read; regenerate it from source with this toolchain."
            ) from error
        return result.stdout_text

    # Optimizing, lowering, measuring ------------------------------------------

    def optimize(self, program: Program, passes: PassList) -> str:
        """Runs ``opt -passes=<passes>`` on the program; returns the optimized IR text.

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: opt rejected the pipeline or crashed on this program.
            CompileTimeout: opt ran past the time limit.
        """
        self.pass_set.validate(passes, self.allow_extra)
        pipeline = passes.pipeline
        result = run_command(
            [self.toolchain.tool("opt"), f"-passes={pipeline}", "-S", "-o", "-", "-"],
            timeout=self.timeout,
            input=program.ir.encode(),
            subject=f"{program.name} with -passes='{pipeline}'",
        )
        return result.stdout_text

    def lower(self, ir: str, *, filetype: str = "obj", name: str = "<ir>") -> bytes:
        """Lowers IR text with ``llc``; ``filetype`` is ``"obj"`` or ``"asm"``."""
        if filetype not in ("obj", "asm"):
            raise ValueError(f"filetype must be 'obj' or 'asm', not {filetype!r}")
        result = run_command(
            [self.toolchain.tool("llc"), f"-filetype={filetype}", "-o", "-", "-"],
            timeout=self.timeout,
            input=ir.encode(),
            subject=name,
        )
        return result.stdout

    def measure_ir(self, ir: str, pipeline: str | None, *, name: str = "<ir>") -> Measurement:
        """Measures already optimized IR text (lowering it to an object)."""
        size = berkeley_size(self.lower(ir, name=name))
        return Measurement(
            pipeline=pipeline,
            binary_size=size.binary_size,
            text=size.text,
            data=size.data,
            ir_instructions=count_instructions(ir),
            llvm_version=self.llvm_version,
        )

    def measure(self, program: Program, passes: PassList | None = None) -> Measurement:
        """Measures ``program`` after ``passes`` (None: the unoptimized input)."""
        if passes is None:
            return self.measure_ir(program.ir, None, name=program.name)
        optimized = self.optimize(program, passes)
        return self.measure_ir(optimized, passes.pipeline, name=program.name)

    def measure_oz(self, program: Program) -> Measurement:
        """Measures ``program`` under ``default<Oz>``, the baseline of LLM Compiler."""
        return self.measure(program, self.passes(OZ_PIPELINE))

    def compile_to(self, program: Program, passes: PassList | None, output: Path) -> Path:
        """Writes the program after ``passes`` as .ll, .bc, .o or .s (by ``output``'s suffix).

        Raises:
            InvalidInput: The suffix is none of those four.
        """
        suffix = output.suffix
        if suffix not in (".ll", ".bc", ".o", ".s"):
            raise InvalidInput(f"{output}: the output must end in .ll, .bc, .o or .s.")
        ir = program.ir if passes is None else self.optimize(program, passes)
        if suffix == ".ll":
            output.write_text(ir)
        elif suffix == ".bc":
            result = run_command(
                [self.toolchain.tool("llvm-as"), "-o", "-", "-"],
                timeout=self.timeout,
                input=ir.encode(),
                subject=program.name,
            )
            output.write_bytes(result.stdout)
        else:
            output.write_bytes(self.lower(ir, filetype="obj" if suffix == ".o" else "asm"))
        return output
