"""The compiler driver: one build command, compiled with the unit's own pass list.

:class:`Driver` runs one command of a project's build in place of its compiler. A
compile of one C or C++ unit to an object (see :mod:`llm_compiler.driver.arguments`)
goes through LLM Compiler's steps:

1. **Front end.** clang with the build's flags (less ``-c``, ``-o``, ``-O``) and the
   project's front-end flags (``-Oz -Xclang -disable-llvm-passes -emit-llvm -S``)
   writes the unit's unoptimized IR, and the build's dependency file if it asked for
   one. Its warnings are shown when the unit is done. If it fails, the build's own line
   runs through clang (``-Oz`` for its ``-O`` levels), so the user sees clang's real
   error and exit status.
2. **Program.** The IR is read by LLVM (:meth:`Compiler.load_ir`); its id is the
   hash of the IR. ``save_ir`` keeps it as ``DIR/<source stem>-<id>.ll``, so that
   ``llm-compiler tune DIR --out TUNED`` tunes exactly these units.
3. **Choice.** The :class:`~llm_compiler.driver.choose.Chooser` picks the pass list.
4. **Optimize and lower.** ``opt`` runs the list (:meth:`Compiler.optimize`) and clang
   lowers the result with the build's code-generation flags
   (:mod:`llm_compiler.driver.lowering`). The line's ``-mllvm`` options go to ``opt``
   and ``llc`` too, as clang gives them to its optimizer and code generator.
5. **Never larger than -Oz.** ``default<Oz>`` is lowered the same way, and clang
   itself compiles the unoptimized IR at ``-Oz``; the smallest object is written
   (atomically), a list's new imports charged
   (:func:`~llm_compiler.driver.lowering.keep_smallest`).
6. **Frame pointers.** With ``frames``, functions get frame pointers where that makes
   the kept object smaller (:mod:`llm_compiler.driver.frames`).

**Backend diagnostics.** What a lowering prints is compared, not shown: a candidate
whose lowering says something other than clang's own -Oz of the unit is not kept, and
when clang's -Oz says anything, the build's line is compiled once more by clang at
``-Oz`` to show clang's exact words (:mod:`llm_compiler.driver.lowering`). Such a unit
is not cached, so a rebuild says it again.

**Units built twice.** With ``share_choices`` (the predictor's builds), a unit compiled
with and without ``-fPIC`` shares one selection (:mod:`llm_compiler.driver.shared_choices`).

Any failure of steps 2 to 5 (an opt crash or timeout, a chooser error, a list the
gate rejects) falls back to compiling the build's line with ``clang -Oz``: the build
is never lost. A failure of the chosen list alone keeps the ``-Oz`` object. ``@FILE``
response files are expanded first, as clang expands them; ``-c`` with several sources
compiles them unit by unit. Every other command (links, ``-E``, ``-S``, ``-flto``,
``--version``...) runs as clang, with ``-Oz`` in place of its ``-O`` levels unless it is
a query (:attr:`~llm_compiler.driver.arguments.Passthrough.arguments`), its output and
exit status passed through.

With a ``log`` file, each unit appends one JSON line (:class:`UnitLog`), written with
one ``write`` on an ``O_APPEND`` descriptor so that ``make -j`` does not interleave.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import Program
from llm_compiler.driver import direct
from llm_compiler.driver.arguments import Passthrough, SeveralUnits, UnitCompile, classify, probe, reads_stdin
from llm_compiler.driver.cache import ObjectCache, unit_key
from llm_compiler.driver.choose import Chooser
from llm_compiler.driver.diagnostics import Lowered
from llm_compiler.driver.direct import append_line
from llm_compiler.driver.lowering import (
    BUILD_TIMEOUT,
    CLANG_OZ_FLAGS,
    LOWER_FLAGS,
    clang_says,
    keep_smallest,
    link_cost,
    lower,
    object_size,
)
from llm_compiler.driver.records import (
    UnitLog,
    completed,
    exit_status,
    ir_file_name,
    write_object,
)
from llm_compiler.driver.response_files import expand_response_files
from llm_compiler.driver.shared_choices import unit_choice
from llm_compiler.driver.unit_compiler import unit_compiler
from llm_compiler.errors import InvalidInput, ToolchainError, reason_of
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.driver import whole_program

_T = TypeVar("_T")

#: Seconds ``opt`` may run on one unit before the driver falls back (the compiler's default).
DEFAULT_OPT_TIMEOUT = 120.0

#: What the cache may hold of a compile: the objects the driver itself chose and lowered.
CACHEABLE = ("chosen", "oz", "clang-oz")


class _SetupError(Exception):
    """A chooser could not be made: carries the option's error out of the fallback."""

    def __init__(self, cause: InvalidInput) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Driver:
    """Runs build commands in place of clang, with each unit's chosen pass list.

    Args:
        language: ``"c"`` (clang) or ``"c++"`` (clang++): which compiler the build meant.
        chooser: Picks each unit's list; wrap choosers in
            :class:`~llm_compiler.driver.choose.FirstOf` to end with ``-Oz``. Or a
            function that makes it from the unit's compiler, called on a cache miss
            only; an :class:`~llm_compiler.errors.InvalidInput` it raises (a bad
            option) stops the command instead of falling back.
        save_ir: Folder to write each unit's unoptimized IR to.
        log: File to append each unit's :class:`UnitLog` line to.
        toolchain: The LLVM to use; found with :func:`find_toolchain` when None.
        compiler: The compiler that runs opt (a chooser may share it); when None, one
            with the subprocess engine is made for each unit and closed after it.
        opt_timeout: Seconds ``opt`` may run on one unit before the driver falls back.
        objective: What "smaller" means between -Oz, clang's -Oz and the chosen list's
            objects (binary size by default, or text size).
        stdout: Where the commands' standard output goes (this process's by default).
        stderr: Where their standard error goes.
        cache: Where objects are kept by unit key (:mod:`llm_compiler.driver.cache`);
            not looked up when ``save_ir`` is given (the IR must be written).
        choosers_identity: What the choosers know, as text: part of the cache key, so
            that new tuned results or another ranker do not reuse old objects.
        whole_program: Objects also carry their unit's IR, and links of such objects
            try one list for the whole program (:mod:`llm_compiler.driver.whole_program`).
        source_key: The command's key for direct hits (:func:`~llm_compiler.driver.direct.source_key`):
            a unit whose object is cached is remembered under it, with the files its front
            end read, so that the next run of the same command skips the front end.
        frames: Give functions frame pointers where that makes the kept object smaller
            (:mod:`llm_compiler.driver.frames`).
        share_choices: Choose once per unoptimized IR (the choosers must answer by IR
            alone, as the predictor does): a choice is kept in the cache by the IR it
            was made for, and a unit compiled with ``-fPIC`` (or ``-fpie``...) is chosen
            for as compiled without it, then that list is measured and validated for
            the unit itself (module docstring).

    Example::

        driver = Driver("c", FirstOf(TunedResults(Path("tuned"))), log=Path("cc.jsonl"))
        status = driver.run(["-O2", "-c", "blocksort.c"])
    """

    def __init__(
        self,
        language: str,
        chooser: Chooser | Callable[[Compiler], Chooser],
        *,
        save_ir: Path | None = None,
        log: Path | None = None,
        toolchain: Toolchain | None = None,
        compiler: Compiler | None = None,
        opt_timeout: float = DEFAULT_OPT_TIMEOUT,
        objective: Objective = DEFAULT_OBJECTIVE,
        stdout: BinaryIO | None = None,
        stderr: BinaryIO | None = None,
        cache: ObjectCache | None = None,
        choosers_identity: str = "",
        whole_program: bool = False,
        source_key: str | None = None,
        share_choices: bool = False,
        frames: bool = True,
    ) -> None:
        if language not in ("c", "c++"):
            raise InvalidInput(f"The driver compiles C or C++, not {language!r}.")
        if not objective.needs_object:
            raise InvalidInput(
                f"llm-compiler cc keeps objects, so it compares them in bytes: --objective binary-size or "
                f"text-size, not {objective.value} (use it with tune, optimize or evaluate)."
            )
        self.objective = objective
        self.language = language
        self.chooser = chooser
        self.save_ir = save_ir
        self.log = log
        self.toolchain = compiler.toolchain if compiler is not None else toolchain or find_toolchain()
        self.compiler = compiler
        self.opt_timeout = opt_timeout
        self.stdout = stdout or sys.stdout.buffer
        self.stderr = stderr or sys.stderr.buffer
        self.cache = cache
        self.choosers_identity = choosers_identity
        self.whole_program = whole_program
        self.source_key = source_key
        self.share_choices = share_choices
        self.frames = frames
        #: clang's own lines ("clang: warning: ...") shown so far, while the units of one
        #: line with several sources compile: clang says them once per line.
        self._said: set[bytes] | None = None

    @property
    def clang(self) -> Path:
        """The clang (or clang++) of the toolchain that stands for the build's compiler."""
        return self.toolchain.tool("clang++" if self.language == "c++" else "clang")

    def run(self, arguments: Sequence[str]) -> int:
        """Runs one build command (the arguments after the compiler); returns its exit status.

        Raises:
            ToolchainError: clang could not be started at all.
        """
        started = time.monotonic()
        expanded = expand_response_files(arguments)
        if expanded is None:  # a file that includes itself, or a folder: clang says which
            return self._passthrough(arguments, Passthrough("a response file clang cannot expand"), started)
        if expanded != list(arguments):
            self.source_key = None  # a direct hit would key the line, not what its files hold
        command = classify(expanded)
        if isinstance(command, Passthrough) and command.arguments == tuple(expanded):
            command = replace(command, arguments=tuple(arguments))  # as given: clang expands its files
        if self.whole_program and not isinstance(command, (UnitCompile, SeveralUnits)):
            from llm_compiler.driver import whole_program

            link = whole_program.ir_link(expanded)
            if link is not None:
                return whole_program.link(self._link_steps(), link, self._new_log(), started)
        if isinstance(command, Passthrough):
            return self._passthrough(arguments, command, started)
        if isinstance(command, UnitCompile):
            why = probe(command.source, os.getcwd())
            if why is not None:  # clang -Oz: nothing of it is shipped, choosing would only cost
                reason = f"{why}: its object is thrown away"
                return self._passthrough(
                    arguments, Passthrough(reason, True, command.fallback_arguments), started
                )
            return self._compile_and_embed(command, started)
        status = 0
        self._said = set()
        self.source_key = None  # a direct hit answers one unit per command
        try:
            for unit in command.units:  # as clang does: every unit, the first failure's status
                compiled = self._compile_and_embed(unit, started)
                status, started = status or compiled, time.monotonic()
        finally:
            self._said = None
        return status

    def _compile_and_embed(self, unit: UnitCompile, started: float) -> int:
        """Compiles one unit; in whole-program mode its object also gets its IR."""
        status, ir = self._compile_unit(unit, started)
        if self.whole_program and status == 0:
            from llm_compiler.driver import whole_program

            return whole_program.embed_ir(self._link_steps(), unit, ir)
        return status

    def _link_steps(self) -> whole_program.LinkSteps:
        """What the whole-program step uses of this driver."""
        from llm_compiler.driver import whole_program

        return whole_program.LinkSteps(
            toolchain=self.toolchain,
            clang=self._clang,
            show=self._show,
            stdout=self.stdout,
            stderr=self.stderr,
            record=self._record,
            size=self._size,
            key=self._key,
            compiler=self._compiler,
            chooser=self._chooser,
            cache=self.cache,
            save_ir=self.save_ir,
            timeout=self.opt_timeout,
        )

    # The build's own commands ------------------------------------------------

    def _clang(self, arguments: Sequence[str], *, input: bytes | None = None) -> CommandResult:
        return run_command([self.clang, *arguments], timeout=BUILD_TIMEOUT, input=input, check=False)

    def _show(self, data: bytes, stream: BinaryIO) -> None:
        if self._said is not None and stream is self.stderr:  # clang's own lines once per line
            own = f"{self.clang.name}: ".encode()
            lines = data.splitlines(keepends=True)
            data = b"".join(line for line in lines if not line.startswith(own) or line not in self._said)
            self._said.update(line for line in lines if line.startswith(own))
        if data:
            stream.write(data)
            stream.flush()

    def _passthrough(self, arguments: Sequence[str], command: Passthrough, started: float) -> int:
        """Runs the command as clang (``command.arguments``, else ``arguments``)."""
        line = command.arguments or tuple(arguments)
        data = sys.stdin.buffer.read() if reads_stdin(line) else None
        result = self._clang(line, input=data)
        self._show(result.stdout, self.stdout)
        self._show(result.stderr, self.stderr)
        if command.compiles:
            self._record(
                UnitLog(
                    source="",
                    output="",
                    cwd=os.getcwd(),
                    reason=f"left to clang: {command.reason}; {' '.join(line)}",
                    seconds=time.monotonic() - started,
                )
            )
        return exit_status(result.returncode)

    def _fallback(self, unit: UnitCompile, log: UnitLog, started: float) -> int:
        """The build's line through clang at -Oz; its output shown (the front end's
        warnings are not shown yet: clang's stderr has them)."""
        result = self._clang(unit.fallback_arguments)
        self._show(result.stdout, self.stdout)
        self._show(result.stderr, self.stderr)
        size = None
        if result.returncode == 0:
            with contextlib.suppress(OSError, InvalidInput):
                size = self._size(Path(unit.output).read_bytes())
        self._record(replace(log, size=size, kept="clang", seconds=time.monotonic() - started))
        return exit_status(result.returncode)

    # A unit compile ----------------------------------------------------------

    def _new_log(self, unit: UnitCompile | None = None) -> UnitLog:
        """A log line for a unit compile (or a link when ``unit`` is None)."""
        return UnitLog(
            source=unit.source if unit else "",
            output=unit.output if unit else "",
            cwd=os.getcwd(),
            llvm=self._llvm_text(),
            objective=self.objective.value,
            arguments=unit.arguments if unit else (),
        )

    def _compile_unit(self, unit: UnitCompile, started: float) -> tuple[int, bytes | None]:
        """Compiles one unit (module docstring); returns the exit status and the unit's
        unoptimized IR (None when the front end failed)."""
        # The front end of the unit without its position flags, whose IR a shared choice
        # is made for, runs beside the unit's own.
        early = ThreadPoolExecutor(max_workers=1)
        try:
            basis_front = None
            if self.share_choices and unit.position_flags:
                basis_front = early.submit(self._clang, [*unit.plain_arguments, *FRONTEND_FLAGS, "-o", "-"])
            return self._compile_unit_with(unit, started, basis_front)
        finally:
            early.shutdown(wait=True, cancel_futures=True)

    def _compile_unit_with(
        self, unit: UnitCompile, started: float, basis_front: Future[CommandResult] | None
    ) -> tuple[int, bytes | None]:
        log = self._new_log(unit)
        since_ns = time.time_ns()
        try:
            front = self._clang([*unit.frontend_arguments, *FRONTEND_FLAGS, "-o", "-"])
        except ToolchainError as error:  # a timeout, or clang could not start
            log = replace(log, reason=f"front end: {reason_of(error)}")
            return self._fallback(unit, log, started), None
        if front.returncode != 0:
            reason = f"front end failed with status {exit_status(front.returncode)}"
            return self._fallback(unit, replace(log, reason=reason), started), None
        key = self._key(unit.codegen_flags, front.stdout)
        hit = self._from_cache(key, unit, log, started) if key is not None and self.save_ir is None else None
        if hit is not None and key is not None:
            self._show(front.stderr, self.stderr)
            if self._remembers(key):
                self._remember(unit, key, completed(self._listing, unit), front.stderr, since_ns)
            return 0, _carried(front.stdout, hit.frame_functions)
        # What does not depend on the choice runs beside it: clang's own -Oz of the IR,
        # the listing of the files the front end read, the lowering of -Oz's IR.
        background = ThreadPoolExecutor(max_workers=2)
        listing = background.submit(self._listing, unit) if self._remembers(key) else None
        try:
            with self._compiler(unit.llvm_options) as compiler:
                chooser = self._chooser(compiler)
                program = compiler.load_ir(front.stdout_text, name=unit.source)
                clang_oz = background.submit(self._lower, unit, program.ir, CLANG_OZ_FLAGS)
                log = replace(log, program_id=program.id)
                if self.save_ir is not None:
                    atomic_write_text(self.save_ir / ir_file_name(unit.source, program), program.ir)
                choice = unit_choice(
                    compiler=compiler,
                    chooser=chooser,
                    unit=unit,
                    program=program,
                    share=self.share_choices,
                    basis_front=basis_front,
                    clang=self._clang,
                    cache=self.cache,
                    key=self._key,
                )
                log = replace(log, pipeline=choice.pipeline, origin=choice.origin, reason=choice.reason)
                obj, log, said = keep_smallest(
                    compiler=compiler,
                    program=program,
                    log=log,
                    clang_oz=clang_oz,
                    background=background,
                    known=front.stderr,
                    lower=partial(self._lower, unit),
                    size=self._size,
                    link_cost=link_cost(program.ir),
                )
                if not said and self.frames:
                    obj, log = self._frames(compiler, chooser, unit, program, log, obj, front.stderr)
            shown = front.stderr
            if said:  # the backend spoke: clang's own words (module docstring)
                status, shown = clang_says(self.clang, unit)
                if status != 0:
                    self._show(shown, self.stderr)
                    reason = f"{log.reason}; clang -Oz fails on the backend's diagnostics (status {status})"
                    seconds = time.monotonic() - started
                    self._record(replace(log, size=None, kept="clang", reason=reason, seconds=seconds))
                    return status, front.stdout
            from llm_compiler.driver.log import object_sections  # in the cache's line too (direct hits)

            log = replace(log, seconds=time.monotonic() - started, sections=object_sections(obj))
            # Stored before the object is written: a build killed between the two finds
            # no object and compiles the unit again (a hit), never an object the cache lacks.
            # A choice a timeout decided (a busy machine) holds for this build only.
            cacheable = log.kept in CACHEABLE and not said and not choice.transient
            store = self.cache if key is not None and cacheable else None
            if store is not None and key is not None:
                store.put(key, obj, log.to_json())
            write_object(Path(unit.output), obj)
        except _SetupError as error:  # a bad option: the build must stop, not fall back
            raise error.cause from error
        except Exception as error:  # any failure of the driver's steps: never lose the build
            status = self._fallback(unit, replace(log, reason=reason_of(error)), started)
            return status, front.stdout
        finally:
            background.shutdown(wait=True, cancel_futures=True)
        self._show(shown, self.stderr)
        self._record(log)
        if store is not None and key is not None:
            store.count("miss", log.seconds)
            if listing is not None:
                self._remember(unit, key, listing, front.stderr, since_ns)
        return 0, _carried(front.stdout, log.frame_functions)

    def _llvm_text(self) -> str:
        return f"{self.toolchain.version} ({self.toolchain.bin_dir})"

    def _key(self, codegen_flags: Sequence[str], ir: bytes) -> str | None:
        """The cache key of IR lowered with ``codegen_flags`` (None without a cache): the
        LLVM in it is named by version and folder, as in the log, and by the files of the
        programs a compile runs, so an LLVM upgraded in place reuses nothing."""
        from llm_compiler.driver.cache import llvm_identity

        if self.cache is None:
            return None
        tools = (self.clang, self.toolchain.bin_dir / "opt", self.toolchain.bin_dir / "llc")
        return unit_key(
            ir,
            language=self.language,
            codegen_flags=codegen_flags,
            llvm=llvm_identity(self._llvm_text(), tools),
            choosers=f"{self.objective.value}; {self.choosers_identity}",
        )

    def _from_cache(self, key: str, unit: UnitCompile, log: UnitLog, started: float) -> UnitLog | None:
        """Writes the cached object of ``key``, if any; its log line when the unit is done."""
        assert self.cache is not None
        entry = self.cache.get(key)
        if entry is None:
            return None
        try:
            write_object(Path(unit.output), entry.object)
        except OSError:
            return None  # compiled as on a miss, which falls back to clang if this persists
        fields = {name: value for name, value in entry.record.items() if name in UnitLog.__dataclass_fields__}
        made = UnitLog(
            **{
                **fields,
                "new_imports": tuple(fields.get("new_imports", ())),
                "frame_functions": tuple(fields.get("frame_functions", ())),
                "arguments": log.arguments,
            }
        )
        seconds = time.monotonic() - started
        self._record(
            replace(made, source=log.source, output=log.output, cwd=log.cwd, cached=True, seconds=seconds)
        )
        self.cache.count("hit", seconds)
        return made

    def _remembers(self, key: str | None) -> bool:
        """Whether a unit compiled under ``key`` is remembered for direct hits."""
        return not (
            key is None
            or self.source_key is None
            or self.cache is None
            or self.whole_program
            or self.save_ir is not None
        )

    def _listing(self, unit: UnitCompile) -> CommandResult:
        """``clang -M`` of the unit: every file its front end reads."""
        return run_command(
            [self.clang, *unit.listing_arguments, *direct.LISTING_FLAGS],
            timeout=BUILD_TIMEOUT,
            subject=unit.source,
        )

    def _remember(
        self, unit: UnitCompile, key: str, listing: Future[CommandResult], warnings: bytes, since_ns: int
    ) -> None:
        """Remembers what the unit's front end read (``listing``: its :meth:`_listing`),
        for direct hits (:mod:`llm_compiler.driver.direct`).

        Anything that goes wrong only leaves the next run of the command to its front end.
        """
        assert self.source_key is not None and self.cache is not None
        try:
            entry = direct.source_entry(
                source=unit.source,
                output=unit.output,
                rule=listing.result().stdout_text,
                dependency_output=unit.dependency_output,
                warnings=warnings,
                tools=[self.clang, self.toolchain.tool("opt")],
                since_ns=since_ns,
            )
        except Exception:
            return
        if entry is not None:
            self.cache.remember(self.source_key, key, entry)

    def _chooser(self, compiler: Compiler) -> Chooser:
        if hasattr(self.chooser, "choose"):
            return self.chooser
        try:
            return self.chooser(compiler)
        except InvalidInput as error:
            raise _SetupError(error) from error

    def _compiler(self, llvm_options: Sequence[str] = ()) -> contextlib.AbstractContextManager[Compiler]:
        """The compiler for a unit: the driver's, unless the unit has LLVM options
        (``-mllvm``) it lacks; then one whose opt and llc take them."""
        if self.compiler is not None and self.compiler.llvm_options == tuple(llvm_options):
            return contextlib.nullcontext(self.compiler)
        return unit_compiler(self.toolchain, self.opt_timeout, llvm_options)

    def _frames(
        self,
        compiler: Compiler,
        chooser: Chooser,
        unit: UnitCompile,
        program: Program,
        log: UnitLog,
        kept: bytes,
        known: bytes,
    ) -> tuple[bytes, UnitLog]:
        """``kept``, or a smaller object with frame pointers (:mod:`llm_compiler.driver.frames`)."""
        from llm_compiler.driver.frames import unit_frames

        selector = getattr(chooser, "confirmer", None)
        lower = partial(self._lower, unit)
        return unit_frames(
            compiler=compiler,
            selector=selector,
            arguments=unit.arguments,
            program=program,
            log=log,
            kept=kept,
            known=known,
            lower=lower,
            size=self._size,
            link_cost=link_cost(program.ir),
        )

    def _size(self, obj: bytes) -> int:
        """An object's size in the driver's objective."""
        return object_size(obj, self.objective)

    def _lower(self, unit: UnitCompile, ir: str, flags: Sequence[str] = LOWER_FLAGS) -> Lowered:
        """Lowers IR with the unit's flags (:func:`~llm_compiler.driver.lowering.lower`)."""
        return lower(self.clang, unit, ir, self._size, flags)

    def _record(self, log: UnitLog) -> None:
        if self.log is not None:
            from llm_compiler.driver.log import with_sections

            append_line(self.log, with_sections(log).to_json())


def _carried(ir: bytes | None, functions: Sequence[str]) -> bytes | None:
    """The IR a whole-program object carries (:func:`llm_compiler.driver.frames.carried_ir`)."""
    if not functions:
        return ir
    from llm_compiler.driver.frames import carried_ir

    return carried_ir(ir, functions)
