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
   lowers the result with the build's code-generation flags (every flag of the line
   but the front end's own: :data:`~llm_compiler.driver.options.FRONTEND_ONLY`)::

       clang -Oz -Xclang -disable-llvm-passes <codegen flags> -c -x ir - -o -

   so ``-fPIC``, ``-m32``, ``-g``, ``-ffunction-sections``, ``-W...``... are honoured.
   The line's ``-mllvm`` options go to ``opt`` and ``llc`` too, as clang gives them to
   its optimizer and code generator.
5. **Never larger than -Oz.** ``default<Oz>`` is lowered the same way, and clang
   itself compiles the unoptimized IR at ``-Oz`` (what ``clang -Oz`` on the source
   gives: clang's own -Oz pipeline can differ from ``opt``'s ``default<Oz>``, in
   either direction). The object with the smallest ``.text + .data`` is written
   (atomically); on a tie ``default<Oz>``'s, then clang's, before the chosen list's.
   A list that makes the object call a function the -Oz object does not (a libc
   ``memset`` for a loop, say) is charged :data:`IMPORT_COST` bytes per such function:
   linked dynamically, each new import adds a dynamic symbol, its name, a PLT entry, a
   relocation and a GOT slot to the binary, which the object's own size does not show.

**Backend diagnostics.** What a lowering prints is compared, not shown
(:mod:`llm_compiler.driver.diagnostics`): it names IR lines, not the source. A
candidate whose lowering says something other than clang's own -Oz of the unit says
is not kept. When clang's -Oz says anything (``-Wframe-larger-than=``, the ``warning``
attribute...), the build's line is compiled once more by clang at ``-Oz`` (to a
scratch object) and its stderr is shown in place of the front end's: clang's exact
words, once per unit; if it fails (``-Werror``), its status is the command's and no
object is written. Such a unit is not cached, so a rebuild says it again.

**Units built twice.** A project that makes a static and a shared library compiles
each unit twice, the second time with ``-fPIC``: the same code, IR that differs in
its symbols' preemption and metadata. With ``share_choices`` (the predictor's builds),
the list is chosen for the unit as compiled without its position flags (one more
front end), kept in the cache by that IR, and then measured and validated for the
``-fPIC`` unit itself (the determinism check and the gate, with its own link): kept
if it passes and is smaller than -Oz there, else -Oz. Both compiles then share one
selection, whichever runs first, so ``make -j`` gives the objects of ``make -j1``.

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
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar, cast

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver import direct
from llm_compiler.driver.arguments import Passthrough, SeveralUnits, UnitCompile, classify, probe, reads_stdin
from llm_compiler.driver.cache import ObjectCache, unit_key
from llm_compiler.driver.choose import Choice, Chooser
from llm_compiler.driver.diagnostics import Lowered, LoweringFailed, backend_messages
from llm_compiler.driver.direct import append_line
from llm_compiler.driver.records import (
    UnitLog,
    completed,
    exit_status,
    ir_file_name,
    write_object,
)
from llm_compiler.driver.response_files import expand_response_files
from llm_compiler.errors import InvalidInput, ToolchainError, reason_of
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.driver import whole_program

_T = TypeVar("_T")

#: Seconds ``opt`` may run on one unit before the driver falls back (the compiler's default).
DEFAULT_OPT_TIMEOUT = 120.0

#: What the cache may hold of a compile: the objects the driver itself chose and lowered.
CACHEABLE = ("chosen", "oz", "clang-oz")

#: Seconds the build's own kind of command may run: a link, the front end, lowering.
BUILD_TIMEOUT = 3600.0

#: clang flags that lower IR to an object without LLVM's optimization passes (the
#: front end's flags less the IR output).
LOWER_FLAGS = tuple(flag for flag in FRONTEND_FLAGS if flag not in ("-emit-llvm", "-S"))

#: clang flags that compile unoptimized IR at -Oz, as ``clang -Oz`` compiles the source.
CLANG_OZ_FLAGS = ("-Oz",)

#: The last flag of a lowering: the build's flags meant for C (``-I``, ``-l``...) are
#: not used on IR, and clang should not say so (whatever ``-W`` the build gave before).
_QUIET = "-Wno-unused-command-line-argument"

#: What one more imported function costs a dynamically linked x86-64 binary, in bytes
#: counted as text + data: .dynsym 24, .rela.plt 24, .plt 16, .got.plt 8, .gnu.version 2,
#: and its name in .dynstr (about 6).
IMPORT_COST = 80


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
                choice = self._choose(compiler, chooser, unit, program, basis_front)
                log = replace(log, pipeline=choice.pipeline, origin=choice.origin, reason=choice.reason)
                obj, log, said = self._build(compiler, unit, program, log, clang_oz, background, front.stderr)
                if not said and self.frames:
                    obj, log = self._frames(compiler, chooser, unit, program, log, obj, front.stderr)
            shown = front.stderr
            if said:  # the backend spoke: clang's own words (module docstring)
                status, shown = self._clang_says(unit)
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

    def _choose(
        self,
        compiler: Compiler,
        chooser: Chooser,
        unit: UnitCompile,
        program: Program,
        basis_front: Future[CommandResult] | None = None,
    ) -> Choice:
        """The unit's choice; with ``share_choices``, made once per IR (module docstring),
        ``basis_front`` the front end of the unit without its position flags."""
        if not self.share_choices:
            return chooser.choose(program) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
        basis, about = program, ""
        if unit.position_flags:
            if basis_front is None:
                basis_front = completed(self._clang, [*unit.plain_arguments, *FRONTEND_FLAGS, "-o", "-"])
            front = basis_front.result()
            if front.returncode == 0:
                basis = compiler.load_ir(front.stdout_text, name=unit.source)
                about = f"the unit without {' '.join(unit.position_flags)}"
        key = self._key(("(a choice)", *unit.llvm_options), basis.ir.encode())  # None without a cache
        remembered = self.cache.choice(key) if self.cache is not None and key is not None else None
        if remembered is not None:
            choice = Choice(**remembered)
        else:
            choice = chooser.choose(basis) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
            if self.cache is not None and key is not None and not choice.transient:
                self.cache.remember_choice(key, asdict(choice))
        if basis is program or choice.pipeline == OZ_PIPELINE:
            return choice
        confirm = getattr(chooser, "confirm", None)
        if confirm is None:
            return Choice(OZ_PIPELINE, "oz", f"the list chosen for {about} could not be checked here")
        return cast(Choice, confirm(program, choice, about))

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
        # opt and llc as processes (one unit per process, the library would not pay off),
        # or, under the compile server, children of its zygote: LLVM loaded once, each
        # compile from the same state (llm_compiler.toolchain.zygote). With -mllvm, processes.
        from llm_compiler.core.compiler import Compiler
        from llm_compiler.toolchain.zygote import ENVIRONMENT as ZYGOTE_ENVIRONMENT

        if not llvm_options and os.environ.get(ZYGOTE_ENVIRONMENT, "off") != "off":
            try:
                compiler = Compiler(
                    self.toolchain, timeout=self.opt_timeout, engine="zygote", workers=1, keep_ir=True
                )
            except ToolchainError as error:
                logger.debug("no zygote: %s", error)
            else:
                logger.debug("engine: %s", compiler.engine_note)
                return compiler
        # keep_ir: the -Oz and chosen lists were measured while choosing; lowering reuses their IR.
        return Compiler(
            self.toolchain,
            timeout=self.opt_timeout,
            engine="subprocess",
            workers=1,
            keep_ir=True,
            llvm_options=llvm_options,
        )

    def _build(
        self,
        compiler: Compiler,
        unit: UnitCompile,
        program: Program,
        log: UnitLog,
        clang_oz: Future[Lowered],
        background: Executor,
        known: bytes,
    ) -> tuple[bytes, UnitLog, bool]:
        """Lowers -Oz (``default<Oz>``; clang's is ``clang_oz``) and the chosen list
        (``log.pipeline``), the two at once; returns the smallest object whose lowering
        says what clang's -Oz of the unit says (``known``: what the front end said), the
        log line completed, and whether clang's -Oz said anything of its own.

        Raises:
            LoweringFailed: clang's -Oz (or default<Oz>'s lowering) fails on a backend
                diagnostic (``-Werror``): so does the build's line, which the caller runs.
        """
        oz_lowered = background.submit(
            self._lower, unit, compiler.optimize(program, compiler.passes(OZ_PIPELINE))
        )
        chosen_lowered = None
        if log.pipeline != OZ_PIPELINE:  # a failure is kept in the future, reported below
            chosen_lowered = completed(
                lambda: self._lower(unit, compiler.optimize(program, compiler.passes(log.pipeline)))
            )
        oz = oz_lowered.result()
        oz_size = self._size(oz.obj)
        log = replace(log, oz_size=oz_size, size=oz_size, kept="oz")
        kept, says = oz.obj, backend_messages(oz.stderr, known)
        try:
            clang = clang_oz.result()
        except LoweringFailed as error:
            if backend_messages(error.stderr, known):
                raise
            log = replace(log, reason=f"{log.reason}; clang -Oz failed: {reason_of(error)}")
        except Exception as error:  # default<Oz>'s object stands
            log = replace(log, reason=f"{log.reason}; clang -Oz failed: {reason_of(error)}")
        else:
            clang_oz_size = self._size(clang.obj)
            log = replace(log, clang_oz_size=clang_oz_size)
            clang_says = backend_messages(clang.stderr, known)
            if clang_says != says:  # what clang -Oz says is what the build says
                reason = f"{log.reason}; default<Oz>'s lowering says other than clang -Oz's"
                kept, log = clang.obj, replace(log, size=clang_oz_size, kept="clang-oz", reason=reason)
            elif clang_oz_size < oz_size:
                kept, log = clang.obj, replace(log, size=clang_oz_size, kept="clang-oz")
            says = clang_says
        if log.pipeline == OZ_PIPELINE:
            return kept, replace(log, chosen_size=oz_size), bool(says)
        assert chosen_lowered is not None
        try:
            chosen = chosen_lowered.result()
            chosen_size = self._size(chosen.obj)
        except Exception as error:  # the chosen list failed: -Oz is kept
            reason = f"the chosen list failed, -Oz kept: {reason_of(error)}"
            return kept, replace(log, reason=reason), bool(says)
        log = replace(log, chosen_size=chosen_size)
        if backend_messages(chosen.stderr, known) != says:
            reason = f"{log.reason}; the chosen list's lowering says other than clang -Oz's, -Oz kept"
            return kept, replace(log, reason=reason), bool(says)
        from llm_compiler.toolchain.elf import undefined_symbols

        imports = sorted(undefined_symbols(chosen.obj) - undefined_symbols(kept))
        if log.size is not None and chosen_size + IMPORT_COST * len(imports) < log.size:
            kept, log = chosen.obj, replace(log, size=chosen_size, kept="chosen", new_imports=tuple(imports))
            return kept, log, bool(says)
        why = f"{len(imports)} new import(s) ({', '.join(imports)}) cost more" if imports else "not smaller"
        return kept, replace(log, reason=f"{log.reason}; {why} than -Oz here, -Oz kept"), bool(says)

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
        """``kept``, or a smaller object with frame pointers where they shrink the unwind
        tables (:mod:`llm_compiler.driver.frames`)."""
        from llm_compiler.driver.frames import smaller_frames

        pipeline = log.pipeline if log.kept == "chosen" else OZ_PIPELINE
        ir = compiler.optimize(program, compiler.passes(pipeline))  # measured already: kept IR
        obj, made = smaller_frames(
            arguments=unit.arguments,
            program=program,
            ir=ir,
            obj=kept,
            kept=kept,
            log=log,
            lower=lambda text: self._lower(unit, text),
            size=self._size,
            selector=getattr(chooser, "confirmer", None),
            says=(),
            known=known,
        )
        if made.frames and log.kept == "clang-oz":  # made from default<Oz>'s IR, not clang's object
            made = replace(made, kept="oz")
        return obj, made

    def _size(self, obj: bytes) -> int:
        """An object's size in the driver's objective."""
        from llm_compiler.toolchain.elf import berkeley_size

        size = berkeley_size(obj)
        return size.text if self.objective is Objective.TEXT_SIZE else size.binary_size

    def _lower(self, unit: UnitCompile, ir: str, flags: Sequence[str] = LOWER_FLAGS) -> Lowered:
        """Lowers IR to an object with clang and the build's code-generation flags (by
        default without LLVM's optimization passes); keeps what clang says.

        Raises:
            LoweringFailed: clang exited non-zero (its stderr in the error).
            InvalidInput: What clang wrote is not an object.
        """
        result = run_command(
            [self.clang, *flags, *unit.codegen_flags, _QUIET, "-c", "-x", "ir", "-", "-o", "-"],
            timeout=BUILD_TIMEOUT,
            input=ir.encode(),
            subject=unit.source,
            check=False,
        )
        if result.returncode != 0:
            status = exit_status(result.returncode)
            raise LoweringFailed(
                f"clang failed with status {status} lowering {unit.source}: {result.stderr_text[-2000:]}",
                stderr=result.stderr,
                status=status,
            )
        self._size(result.stdout)  # raises InvalidInput if it is not an object
        return Lowered(result.stdout, result.stderr)

    def _clang_says(self, unit: UnitCompile) -> tuple[int, bytes]:
        """The exit status and stderr of the build's line compiled by clang at ``-Oz``
        (to a scratch object, without its dependency-file options)."""
        with tempfile.TemporaryDirectory(prefix="llm-compiler-cc-") as scratch:
            scratch_object = os.path.join(scratch, "unit.o")
            result = self._clang([*unit.listing_arguments, "-Oz", "-c", "-o", scratch_object])
        return exit_status(result.returncode), result.stderr

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
