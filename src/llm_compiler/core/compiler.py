"""Measuring code exactly as LLM Compiler does: apply a pass list, lower, count.

The :class:`Compiler` applies a pass list to a :class:`~llm_compiler.core.program.Program`
with ``opt -passes=<pipeline>``, lowers the result to an x86-64 (or the module's target)
object with ``llc -filetype=obj`` at llc's default code-generation level (the IR's
``minsize``/``optsize`` attributes steer it), and returns a
:class:`~llm_compiler.core.program.Measurement`:

* ``binary_size`` = ``text`` + ``data`` in the Berkeley sense of ``llvm-size``
  (:mod:`llm_compiler.toolchain.elf`), read from the object's section headers;
* ``ir_instructions``, the instruction count of the optimized IR
  (:mod:`llm_compiler.toolchain.ir`).

The pipeline ``opt -passes=P | llc -filetype=obj | llvm-size`` run by hand gives the
same figures (the tests check it). "Unoptimized" means the front-end IR lowered as
is; ``-Oz`` means the pipeline ``default<Oz>``.

Every pass list reaches LLVM through :meth:`Compiler.passes` (text from outside) or a
method taking a :class:`~llm_compiler.passes.pipeline.PassList`; either way it is
checked against the :class:`~llm_compiler.passes.searchable.PassSet` gate once, and a
list checked before is not checked again. :meth:`Compiler.compile` returns every
output one caller needs (IR, assembly, object) from one compile. The engine
(:mod:`llm_compiler.core.engines`) does the work.

Objects are compiled once: a compile that produces an object keeps it in a bounded
in-memory cache keyed by (program id, pipeline), and every later request for that
object (the target's link check, its run, the user's check) and every measurement of
that pair reuse it. ``fresh=True`` compiles anew all the same: the selection layer's
determinism check compares a second, independent compile with the first.
:attr:`Compiler.counts` counts engine compiles, IR counts without code generation
(:meth:`Compiler.count`, for the ``ir-instructions`` objective) and cache hits.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, Protocol

from llm_compiler.core.engines import (
    OUTPUTS,
    CompileEngine,
    Engine,
    InProcessEngine,
    SubprocessEngine,
    ZygoteEngine,
    check_llvm_options,
    run_llc,
)
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, CompileResult, IRCount, Measurement, Program
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput, ToolchainError
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet, load_pass_set
from llm_compiler.toolchain.frontend import FrontendOptions, emit_ir, language_of
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.llvm_c import build_shim, load_library
from llm_compiler.toolchain.runner import run_command
from llm_compiler.toolchain.worker_pool import WorkerPool

logger = logging.getLogger(__name__)

#: Default per-process time limit (LLM Compiler dropped pass lists taking over 120 s).
DEFAULT_TIMEOUT = 120.0

#: Pipelines a compiler remembers as already checked by the gate.
_CHECKED_KEPT = 100_000

#: Bytes of object code a compiler keeps for reuse (least recently used dropped first).
OBJECT_CACHE_BYTES = 64 * 1024 * 1024


class Compiler:
    """Applies pass lists to programs and measures them with one LLVM toolchain.

    Args:
        toolchain: The LLVM to use; found with :func:`find_toolchain` when None.
        timeout: Seconds each LLVM process may run before it is killed.
        allow_extra: Passes outside the searchable set that pass lists may use.
        engine: An :class:`Engine` or its name (see :mod:`llm_compiler.core.engines`).
        workers: In-process workers (default: the number of cores).
        keep_ir: Keep the optimized IR of each compile (bounded like the objects), so
            that :meth:`optimize` of a list measured before runs nothing: the compiler
            driver measures candidates, then lowers the one it keeps.
        llvm_options: LLVM options given to every ``opt`` and ``llc`` run, as ``clang
            -mllvm X`` gives them to its optimizer and code generator (a build's
            ``-mllvm``); checked by :func:`~llm_compiler.core.engines.check_llvm_options`.
            They need the subprocess engine (``auto`` picks it).

    Raises:
        ToolchainError: ``engine="inprocess"`` but the LLVM library cannot be loaded;
            ``engine="zygote"`` but no zygote of this LLVM answers
            (:class:`~llm_compiler.core.engines.ZygoteEngine`).
        InvalidInput: An unknown engine name; an LLVM option that is not one, or
            ``engine="inprocess"`` with LLVM options.

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
        engine: Engine | str = Engine.AUTO,
        workers: int | None = None,
        keep_ir: bool = False,
        llvm_options: Iterable[str] = (),
    ) -> None:
        self.toolchain = toolchain or find_toolchain()
        self.timeout = timeout
        self.allow_extra = tuple(allow_extra)
        self.llvm_options = check_llvm_options(tuple(llvm_options))
        self.workers = workers or os.cpu_count() or 1
        self._engine, self.engine_note = self._choose_engine(Engine.parse(engine))
        self._checked: dict[str, None] = {}
        self._objects: OrderedDict[tuple[str, str | None], CompileResult] = OrderedDict()
        self._object_bytes = 0
        self._objects_lock = threading.Lock()
        self.keep_ir = keep_ir
        self._irs: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._ir_bytes = 0
        #: ``compiles`` (engine compiles), ``object-cache-hits``, and per program id
        #: ``compiles:<id>``: what tests and benchmarks count.
        self.counts: Counter[str] = Counter()

    def _choose_engine(self, engine: Engine) -> tuple[CompileEngine, str]:
        if self.llvm_options and engine is Engine.INPROCESS:
            raise InvalidInput(
                f"LLVM options ({' '.join(self.llvm_options)}) are given to opt and llc processes: "
                "use the subprocess engine (or auto) with them."
            )
        if engine is Engine.ZYGOTE and not self.llvm_options:
            zygote = ZygoteEngine(self.toolchain, self.timeout)
            return zygote, f"zygote engine (LLVM forked per compile, {zygote.zygote.path})"
        if engine is Engine.SUBPROCESS or self.llvm_options:
            why = "as asked" if engine is Engine.SUBPROCESS else "for the LLVM options"
            engine_ = SubprocessEngine(self.toolchain, self.timeout, self.llvm_options)
            return engine_, f"subprocess engine (opt, llc), {why}"
        try:
            library = load_library(self.toolchain)
        except ToolchainError as error:
            if engine is Engine.INPROCESS:
                raise
            logger.warning("in-process engine unavailable, using opt and llc: %s", error)
            return SubprocessEngine(self.toolchain, self.timeout), f"subprocess engine (opt, llc): {error}"
        _, codegen = build_shim(self.toolchain)
        note = f"in-process engine ({library.path.name}, {self.workers} workers; {codegen})"
        return InProcessEngine(self.toolchain, self.timeout, self.workers), note

    @property
    def engine(self) -> Engine:
        """The engine in use (never ``auto``)."""
        return self._engine.kind

    @property
    def pool(self) -> WorkerPool:
        """The in-process engine's workers (started on first use).

        Raises:
            ToolchainError: This compiler uses the subprocess engine.
        """
        if not isinstance(self._engine, InProcessEngine):
            raise ToolchainError("This compiler runs opt and llc as processes; it has no in-process workers.")
        return self._engine.pool

    def close(self) -> None:
        """Stops the in-process workers, if any."""
        self._engine.close()

    def __enter__(self) -> Compiler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def llvm_version(self) -> str:
        return self.toolchain.version

    @property
    def pass_set(self) -> PassSet:
        """The searchable pass set of this toolchain (the pass-list gate)."""
        return load_pass_set(self.toolchain)

    def passes(self, text: str) -> PassList:
        """Parses and checks pipeline text against the searchable set.

        Raises:
            InvalidPassList: See :meth:`PassSet.validate`.
        """
        passes = self.pass_set.parse(text, self.allow_extra)
        self._remember_checked(passes.pipeline)
        return passes

    def check(self, passes: PassList | None) -> str | None:
        """The pipeline text of ``passes`` (None for None), checked by the gate unless it
        was before by this compiler.

        Raises:
            InvalidPassList: See :meth:`PassSet.validate`.
        """
        if passes is None:
            return None
        pipeline = passes.pipeline
        if pipeline not in self._checked:
            self.pass_set.validate(passes, self.allow_extra)
            self._remember_checked(pipeline)
        return pipeline

    def _remember_checked(self, pipeline: str) -> None:
        self._checked[pipeline] = None
        if len(self._checked) > _CHECKED_KEPT:
            del self._checked[next(iter(self._checked))]

    def _replay(self, program: Program, pipeline: str | None) -> list[str]:
        """The command that replays a compile (on the program's IR, which
        ``llm-compiler compile FILE -o FILE.ll`` writes)."""
        source = program.source if program.language == "ir" and program.source else f"{program.name}.ll"
        if pipeline is None:
            return [str(self.toolchain.tool("llc")), *self.llvm_options, "-filetype=obj", source]
        return [str(self.toolchain.tool("opt")), *self.llvm_options, f"-passes={pipeline}", source]

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
            text = self._read_ir([self.toolchain.tool("opt"), "-S", "-o", "-", path], None, str(path))
            return Program(name=str(path), ir=text, language="ir", source=str(path))
        ir = emit_ir(self.toolchain, path, options, timeout=self.timeout)
        return Program(name=str(path), ir=ir, language=language, source=str(path))

    def load_ir(self, ir: str, name: str = "<ir>") -> Program:
        """Checks IR text with LLVM's parser and verifier and wraps it as a Program.

        Raises:
            InvalidInput: LLVM cannot parse or verify the text.
        """
        text = self._read_ir([self.toolchain.tool("opt"), "-S", "-o", "-", "-"], ir.encode(), name)
        return Program(name=name, ir=text, language="ir")

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

    # Compiling and measuring -------------------------------------------------

    def compile(
        self,
        program: Program,
        passes: PassList | None = None,
        outputs: Collection[str] = (),
        *,
        fresh: bool = False,
    ) -> CompileResult:
        """Applies ``passes`` (None: none), lowers the result and measures it, once.

        Args:
            program: The program.
            passes: The pass list; checked by the gate unless it was before.
            outputs: What to return besides the measurement: any of ``"ir"`` (the
                optimized IR), ``"asm"`` (the assembly) and ``"obj"`` (the object file).
            fresh: Compile even when the object cache holds this (program, list); the
                new object replaces the cached one.

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: LLVM rejected the list or crashed on this program.
            CompileTimeout: LLVM ran past the time limit.
        """
        unknown = set(outputs) - OUTPUTS
        if unknown:
            raise ValueError(f"unknown outputs {sorted(unknown)}; choose from {sorted(OUTPUTS)}")
        pipeline = self.check(passes)
        key = (program.id, pipeline)
        with self._objects_lock:  # candidates are measured from several threads
            cached = None if fresh or not set(outputs) <= {"obj"} else self._objects.get(key)
            if cached is not None:
                self._objects.move_to_end(key)
                self.counts["object-cache-hits"] += 1
                return cached
            self.counts["compiles"] += 1
            self.counts[f"compiles:{program.id}"] += 1
        wanted = {*outputs, "ir"} if self.keep_ir and pipeline is not None else outputs
        result = self._engine.compile(program, pipeline, wanted, self._replay(program, pipeline))
        if result.obj is not None:
            self._keep_object(key, CompileResult(result.measurement, obj=result.obj))
        if result.ir is not None and pipeline is not None and self.keep_ir:
            self._keep_ir((program.id, pipeline), result.ir)
        return result

    def _keep_ir(self, key: tuple[str, str], ir: str) -> None:
        with self._objects_lock:
            previous = self._irs.pop(key, None)
            self._ir_bytes += len(ir) - len(previous or "")
            self._irs[key] = ir
            while self._ir_bytes > OBJECT_CACHE_BYTES and len(self._irs) > 1:
                _, dropped = self._irs.popitem(last=False)
                self._ir_bytes -= len(dropped)

    def _keep_object(self, key: tuple[str, str | None], result: CompileResult) -> None:
        assert result.obj is not None
        with self._objects_lock:
            previous = self._objects.pop(key, None)
            if previous is not None and previous.obj is not None:
                self._object_bytes -= len(previous.obj)
            self._objects[key] = result
            self._object_bytes += len(result.obj)
            while self._object_bytes > OBJECT_CACHE_BYTES and len(self._objects) > 1:
                _, dropped = self._objects.popitem(last=False)
                self._object_bytes -= len(dropped.obj or b"")

    def measure(self, program: Program, passes: PassList | None = None) -> Measurement:
        """Measures ``program`` after ``passes`` (None: the unoptimized input)."""
        return self.compile(program, passes).measurement

    def count(self, program: Program, passes: PassList | None = None) -> IRCount:
        """Counts the instructions of ``program`` after ``passes``, generating no code
        (what an ``ir-instructions`` search measures; several times cheaper than
        :meth:`measure` on large units). An object compiled before for the pair gives
        its count without a compile.

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: LLVM rejected the list or crashed on this program.
            CompileTimeout: LLVM ran past the time limit.
        """
        pipeline = self.check(passes)
        key = (program.id, pipeline)
        with self._objects_lock:
            cached = self._objects.get(key)
            if cached is not None:
                self.counts["object-cache-hits"] += 1
                found = cached.measurement
                return IRCount(pipeline, found.ir_instructions, found.llvm_version, found.ir_hash)
            self.counts["counts"] += 1
            self.counts[f"compiles:{program.id}"] += 1
        return self._engine.count(program, pipeline, self._replay(program, pipeline))

    def value(
        self, program: Program, passes: PassList | None, objective: Objective = DEFAULT_OBJECTIVE
    ) -> tuple[int, str]:
        """The ``objective``'s value of ``program`` after ``passes`` and the optimized-IR
        hash, generating code only when the objective needs it.

        Raises:
            InvalidPassList, CommandFailed, CompileTimeout: As :meth:`compile`.
        """
        if objective.needs_object:
            measurement = self.measure(program, passes)
            return objective.of(measurement), measurement.ir_hash
        counted = self.count(program, passes)
        return counted.ir_instructions, counted.ir_hash

    def measure_oz(self, program: Program) -> Measurement:
        """Measures ``program`` under ``default<Oz>``, the baseline of LLM Compiler."""
        return self.measure(program, self.passes(OZ_PIPELINE))

    def optimize(self, program: Program, passes: PassList) -> str:
        """The optimized IR text of ``program`` after ``passes`` (kept from an earlier
        compile with ``keep_ir``)."""
        if self.keep_ir:
            with self._objects_lock:
                kept = self._irs.get((program.id, self.check(passes) or ""))
            if kept is not None:
                self.counts["ir-hits"] += 1
                return kept
        ir = self.compile(program, passes, ("ir",)).ir
        assert ir is not None
        return ir

    def assemble(self, program: Program, passes: PassList | None = None) -> str:
        """The assembly ``llc`` writes for ``program`` after ``passes`` (None: unoptimized)."""
        assembly = self.compile(program, passes, ("asm",)).assembly
        assert assembly is not None
        return assembly

    def object_code(
        self, program: Program, passes: PassList | None, *, fresh: bool = False
    ) -> tuple[bytes, Measurement]:
        """The object file of ``program`` after ``passes`` (None: unoptimized), and its
        measurement (whose ``ir_hash`` identifies the optimized IR); from the object
        cache unless ``fresh``."""
        result = self.compile(program, passes, ("obj",), fresh=fresh)
        assert result.obj is not None
        return result.obj, result.measurement

    def measure_stepwise(self, program: Program, passes: PassList, *, use_cache: bool = True) -> Measurement:
        """Measures ``passes`` run one top-level element at a time, reusing prefix states.

        The in-process engine keeps the state after each prefix, so lists that share a
        prefix only run their new suffix. Results are equal with and without the cache,
        and equal the whole-pipeline :meth:`measure` except in rare cases where analyses
        kept across elements matter; report lists re-measured with :meth:`measure`.
        The subprocess engine has no prefix states: it runs one ``opt`` per element, so
        that every engine gives the same result.
        """
        return self.compile_stepwise(program, passes, use_cache=use_cache).measurement

    def compile_stepwise(
        self, program: Program, passes: PassList, *, use_cache: bool = True, want_ir: bool = False
    ) -> CompileResult:
        """:meth:`measure_stepwise`, with the optimized IR text when ``want_ir``.

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: LLVM rejected the list or crashed on this program.
            CompileTimeout: LLVM ran past the time limit.
        """
        pipeline = self.check(passes)
        elements = tuple(str(node) for node in passes)
        replay = self._replay(program, pipeline)
        return self._engine.compile_stepwise(program, elements, use_cache, replay, want_ir)

    def count_stepwise(
        self, program: Program, passes: PassList, *, use_cache: bool = True, want_ir: bool = False
    ) -> tuple[IRCount, str | None]:
        """Counts the instructions after ``passes`` run one top-level element at a time
        (prefix states reused, as :meth:`measure_stepwise`), generating no code; the
        optimized IR text too when ``want_ir``.

        Raises:
            InvalidPassList: The list fails the searchable-set gate.
            CommandFailed: LLVM rejected the list or crashed on this program.
            CompileTimeout: LLVM ran past the time limit.
        """
        pipeline = self.check(passes) if passes else None
        elements = tuple(str(node) for node in passes)
        with self._objects_lock:
            self.counts["counts"] += 1
            self.counts[f"compiles:{program.id}"] += 1
        replay = self._replay(program, pipeline)
        return self._engine.count_stepwise(program, elements, use_cache, replay, want_ir)

    def measure_ir(self, ir: str, pipeline: str | None, *, name: str = "<ir>") -> Measurement:
        """Measures already optimized IR text (lowering it to an object)."""
        replay = [str(self.toolchain.tool("llc")), "-filetype=obj", f"{name}.ll"]
        return self._engine.lower_ir(ir, pipeline, name, replay)

    def lower(self, ir: str, *, filetype: str = "obj", name: str = "<ir>") -> bytes:
        """Lowers IR text with ``llc`` to object bytes or assembly (``filetype``
        ``"obj"`` or ``"asm"``). Always a subprocess: the file itself is wanted."""
        return run_llc(
            self.toolchain, ir, filetype, timeout=self.timeout, name=name, llvm_options=self.llvm_options
        )

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


class CompilerSettings(Protocol):
    """What fixes a compiler made in another process (tuning and dataset settings have it)."""

    @property
    def llvm_bin(self) -> str | None: ...
    @property
    def timeout(self) -> float: ...
    @property
    def engine(self) -> str: ...
    @property
    def allow_extra(self) -> tuple[str, ...]: ...


_PROCESS_COMPILERS: dict[tuple[Any, ...], Compiler] = {}


def process_compiler(settings: CompilerSettings) -> Compiler:
    """The compiler of this process for ``settings`` (made once per process, one worker).

    Jobs that run in pool or Dask workers call it, so a worker keeps its compiler (and
    the programs and prefix states its engine holds) from one job to the next.
    """
    key = (settings.llvm_bin, settings.timeout, str(settings.engine), settings.allow_extra)
    if key not in _PROCESS_COMPILERS:
        _PROCESS_COMPILERS[key] = Compiler(
            find_toolchain(settings.llvm_bin),
            timeout=settings.timeout,
            allow_extra=settings.allow_extra,
            engine=settings.engine,
            workers=1,
        )
    return _PROCESS_COMPILERS[key]
