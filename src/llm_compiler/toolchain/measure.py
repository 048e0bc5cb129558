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
:class:`~llm_compiler.passes.searchable.PassSet` gate before LLVM sees it.

Two engines give the same answers: ``subprocess`` runs ``opt`` and ``llc``; ``inprocess``
runs LLVM through its C API in crash-isolated workers
(:mod:`llm_compiler.toolchain.workers`) and saves the processes' start-up. ``auto`` (the
default) takes the in-process engine when the LLVM library loads, and says why not
otherwise.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput, ToolchainError
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet, load_pass_set
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.frontend import FrontendOptions, emit_ir, language_of
from llm_compiler.toolchain.inprocess import Evaluation, ir_hash
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.llvm_c import build_shim, load_library
from llm_compiler.toolchain.runner import run_command
from llm_compiler.toolchain.workers import WorkerPool

logger = logging.getLogger(__name__)

ENGINES = ("auto", "inprocess", "subprocess")

#: Default per-process time limit (LLM Compiler dropped pass lists taking over 120 s).
DEFAULT_TIMEOUT = 120.0

OZ_PIPELINE = "default<Oz>"
O0_PIPELINE = "default<O0>"
_MODULE_ID_COMMENT = "; ModuleID = "


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
        """Stable id: the first 16 hex digits of the SHA-256 of the IR text.

        A first ``; ModuleID = ...`` line is left out: LLVM prints there the name it
        read the module from (a path, ``<stdin>``), which is a comment when the text is
        read back. The same IR therefore has the same id wherever its file lies.
        """
        text = self.ir
        if text.startswith(_MODULE_ID_COMMENT):
            text = text.partition("\n")[2]
        return hashlib.sha256(text.encode()).hexdigest()[:16]


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


class Compiler:
    """Applies pass lists to programs and measures them with one LLVM toolchain.

    Args:
        toolchain: The LLVM to use; found with :func:`find_toolchain` when None.
        timeout: Seconds each LLVM process may run before it is killed.
        allow_extra: Passes outside the searchable set that pass lists may use.
        engine: ``"auto"``, ``"inprocess"`` or ``"subprocess"`` (see the module docstring).
        workers: In-process workers (default: the number of cores).

    Raises:
        ToolchainError: ``engine="inprocess"`` but the LLVM library cannot be loaded.

    Example::

        compiler = Compiler()
        program = compiler.load(Path("examples/crc32.c"))
        compiler.measure(program, compiler.passes("module(default<Oz>)")).binary_size
    """

    def __init__(
        self,
        toolchain: Toolchain | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        allow_extra: Iterable[str] = (),
        engine: str = "auto",
        workers: int | None = None,
    ) -> None:
        self.toolchain = toolchain or find_toolchain()
        self.timeout = timeout
        self.allow_extra = tuple(allow_extra)
        self.workers = workers or os.cpu_count() or 1
        self.engine, self.engine_note = self._choose_engine(engine)
        self._pool: WorkerPool | None = None

    def _choose_engine(self, engine: str) -> tuple[str, str]:
        if engine not in ENGINES:
            raise InvalidInput(f"Unknown engine {engine!r}; choose one of {', '.join(ENGINES)}.")
        if engine == "subprocess":
            return "subprocess", "subprocess engine (opt, llc), as asked"
        try:
            library = load_library(self.toolchain)
        except ToolchainError as error:
            if engine == "inprocess":
                raise
            logger.warning("in-process engine unavailable, using opt and llc: %s", error)
            return "subprocess", f"subprocess engine (opt, llc): {error}"
        _, codegen = build_shim(self.toolchain)
        return "inprocess", f"in-process engine ({library.path.name}, {self.workers} workers; {codegen})"

    @property
    def pool(self) -> WorkerPool:
        """The in-process workers (started on first use)."""
        if self._pool is None:
            self._pool = WorkerPool(self.toolchain, size=self.workers, timeout=self.timeout)
        return self._pool

    def close(self) -> None:
        """Stops the in-process workers, if any."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Compiler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _replay(self, program: Program, pipeline: str | None) -> list[str]:
        """The opt command that replays an in-process evaluation (on the program's IR,
        which ``llm-compiler compile FILE -o FILE.ll`` writes)."""
        source = program.source if program.language == "ir" and program.source else f"{program.name}.ll"
        if pipeline is None:
            return [str(self.toolchain.tool("llc")), "-filetype=obj", source]
        return [str(self.toolchain.tool("opt")), f"-passes={pipeline}", source]

    def _subject(self, program: Program, pipeline: str | None) -> str:
        return f"{program.name} with -passes='{pipeline}'" if pipeline else program.name

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
            if error.crashed or isinstance(error, CompileTimeout):
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
        if self.engine == "inprocess":
            evaluation = self._evaluate(program, pipeline, want_ir=True)
            assert evaluation.ir is not None
            return evaluation.ir
        result = run_command(
            [self.toolchain.tool("opt"), f"-passes={pipeline}", "-S", "-o", "-", "-"],
            timeout=self.timeout,
            input=program.ir.encode(),
            subject=f"{program.name} with -passes='{pipeline}'",
        )
        return result.stdout_text

    def _evaluate(
        self,
        program: Program,
        pipeline: str | None,
        *,
        want_ir: bool = False,
        want_asm: bool = False,
        want_obj: bool = False,
    ) -> Evaluation:
        return self.pool.evaluate(
            program.id,
            program.ir,
            pipeline,
            subject=self._subject(program, pipeline),
            replay=self._replay(program, pipeline),
            want_ir=want_ir,
            want_asm=want_asm,
            want_obj=want_obj,
        )

    def _measurement(self, evaluation: Evaluation, pipeline: str | None) -> Measurement:
        return Measurement(
            pipeline=pipeline,
            binary_size=evaluation.text + evaluation.data,
            text=evaluation.text,
            data=evaluation.data,
            ir_instructions=evaluation.ir_instructions,
            llvm_version=self.llvm_version,
            ir_hash=evaluation.ir_hash,
        )

    def lower(self, ir: str, *, filetype: str = "obj", name: str = "<ir>") -> bytes:
        """Lowers IR text with ``llc`` to object bytes or assembly (``filetype``
        ``"obj"`` or ``"asm"``). Always a subprocess: the file itself is wanted."""
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
        if self.engine == "inprocess":
            replay = [str(self.toolchain.tool("llc")), "-filetype=obj", f"{name}.ll"]
            evaluation = self.pool.lower(ir, subject=name, replay=replay)
            return self._measurement(evaluation, pipeline)
        size = berkeley_size(self.lower(ir, name=name))
        return Measurement(
            pipeline=pipeline,
            binary_size=size.binary_size,
            text=size.text,
            data=size.data,
            ir_instructions=count_instructions(ir),
            llvm_version=self.llvm_version,
            ir_hash=ir_hash(ir),
        )

    def measure(self, program: Program, passes: PassList | None = None) -> Measurement:
        """Measures ``program`` after ``passes`` (None: the unoptimized input)."""
        if passes is not None:
            self.pass_set.validate(passes, self.allow_extra)
        pipeline = passes.pipeline if passes is not None else None
        if self.engine == "inprocess":
            return self._measurement(self._evaluate(program, pipeline), pipeline)
        if pipeline is None:
            return self.measure_ir(program.ir, None, name=program.name)
        return self.measure_ir(self.optimize(program, passes), pipeline, name=program.name)  # type: ignore[arg-type]

    def measure_stepwise(self, program: Program, passes: PassList, *, use_cache: bool = True) -> Measurement:
        """Measures ``passes`` run one top-level element at a time, reusing prefix states.

        The in-process engine keeps the state after each prefix, so lists that share a
        prefix only run their new suffix. Results are equal with and without the cache,
        and equal the whole-pipeline :meth:`measure` except in rare cases where analyses
        kept across elements matter; report lists re-measured with :meth:`measure`.
        The subprocess engine has no prefix states and measures the whole pipeline.
        """
        self.pass_set.validate(passes, self.allow_extra)
        if self.engine != "inprocess":
            return self.measure(program, passes)
        pipeline = passes.pipeline
        evaluation = self.pool.evaluate(
            program.id,
            program.ir,
            pipeline,
            subject=self._subject(program, pipeline),
            replay=self._replay(program, pipeline),
            stepwise=tuple(str(node) for node in passes),
            use_cache=use_cache,
        )
        return self._measurement(evaluation, pipeline)

    def object_code(self, program: Program, passes: PassList | None) -> tuple[bytes, Measurement]:
        """The object file of ``program`` after ``passes`` (None: unoptimized), and its
        measurement (whose ``ir_hash`` identifies the optimized IR).

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: LLVM rejected the list or crashed.
            CompileTimeout: LLVM ran past the time limit.
        """
        if passes is not None:
            self.pass_set.validate(passes, self.allow_extra)
        pipeline = passes.pipeline if passes is not None else None
        if self.engine == "inprocess":
            evaluation = self._evaluate(program, pipeline, want_obj=True)
            assert evaluation.obj is not None
            return evaluation.obj, self._measurement(evaluation, pipeline)
        ir = program.ir if passes is None else self.optimize(program, passes)
        obj = self.lower(ir, name=program.name)
        size = berkeley_size(obj)
        measurement = Measurement(
            pipeline,
            size.binary_size,
            size.text,
            size.data,
            count_instructions(ir),
            self.llvm_version,
            ir_hash(ir),
        )
        return obj, measurement

    def assemble(self, program: Program, passes: PassList | None = None) -> str:
        """The assembly ``llc`` writes for ``program`` after ``passes`` (None: unoptimized)."""
        if passes is not None:
            self.pass_set.validate(passes, self.allow_extra)
        pipeline = passes.pipeline if passes is not None else None
        if self.engine == "inprocess":
            assembly = self._evaluate(program, pipeline, want_asm=True).assembly
            assert assembly is not None
            return assembly
        ir = program.ir if passes is None else self.optimize(program, passes)
        return self.lower(ir, filetype="asm", name=program.name).decode("utf-8", errors="replace")

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
