"""The compiler driver: one build command, compiled with the unit's own pass list.

:class:`Driver` runs one command of a project's build in place of its compiler. A
compile of one C or C++ unit to an object (see :mod:`llm_compiler.driver.arguments`)
goes through LLM Compiler's steps:

1. **Front end.** clang with the build's flags (less ``-c``, ``-o``, ``-O``) and the
   project's front-end flags (``-Oz -Xclang -disable-llvm-passes -emit-llvm -S``)
   writes the unit's unoptimized IR, and the build's dependency file if it asked for
   one. Its warnings are shown. If it fails, the build's own line runs through clang
   (``-Oz`` for its ``-O`` levels), so the user sees clang's real error and exit status.
2. **Program.** The IR is read by LLVM (:meth:`Compiler.load_ir`); its id is the
   hash of the IR. ``save_ir`` keeps it as ``DIR/<source stem>-<id>.ll``, so that
   ``llm-compiler tune DIR --out TUNED`` tunes exactly these units.
3. **Choice.** The :class:`~llm_compiler.driver.choose.Chooser` picks the pass list.
4. **Optimize and lower.** ``opt`` runs the list (:meth:`Compiler.optimize`) and clang
   lowers the result with the build's code-generation flags::

       clang -Oz -Xclang -disable-llvm-passes <codegen flags> -c -x ir - -o -

   so ``-fPIC``, ``-m32``, ``-g``, ``-ffunction-sections``... are honoured.
5. **Never larger than -Oz.** ``default<Oz>`` is lowered the same way, and clang
   itself compiles the unoptimized IR at ``-Oz`` (what ``clang -Oz`` on the source
   gives: clang's own -Oz pipeline can differ from ``opt``'s ``default<Oz>``, in
   either direction). The object with the smallest ``.text + .data`` is written
   (atomically); on a tie ``default<Oz>``'s, then clang's, before the chosen list's.
   A list that makes the object call a function the -Oz object does not (a libc
   ``memset`` for a loop, say) is charged :data:`IMPORT_COST` bytes per such function:
   linked dynamically, each new import adds a dynamic symbol, its name, a PLT entry, a
   relocation and a GOT slot to the binary, which the object's own size does not show.

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
is never lost. A failure of the chosen list alone keeps the ``-Oz`` object. Every
other command (links, ``-E``, ``-S``, ``--version``...) runs as clang with the
arguments unchanged, its output and exit status passed through.

With a ``log`` file, each unit appends one JSON line (:class:`UnitLog`), written with
one ``write`` on an ``O_APPEND`` descriptor so that ``make -j`` does not interleave.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver import direct
from llm_compiler.driver.arguments import Passthrough, UnitCompile, classify, reads_stdin
from llm_compiler.driver.cache import DEFAULT_MAX_BYTES, ObjectCache, unit_key
from llm_compiler.driver.choose import Choice, Chooser
from llm_compiler.driver.direct import append_line
from llm_compiler.errors import InvalidInput, ToolchainError
from llm_compiler.files import atomic_write_bytes, atomic_write_text
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler

_T = TypeVar("_T")

#: Seconds ``opt`` may run on one unit before the driver falls back (the compiler's default).
DEFAULT_OPT_TIMEOUT = 120.0

#: What the cache may hold of a compile: the objects the driver itself chose and lowered.
CACHEABLE = ("chosen", "oz", "clang-oz")

#: Seconds the build's own kind of command may run: a link, the front end, lowering.
BUILD_TIMEOUT = 3600.0

#: clang flags that lower IR to an object without LLVM's optimization passes (the
#: front end's flags less the IR output; flags meant for C are not used on IR).
LOWER_FLAGS = (
    *(flag for flag in FRONTEND_FLAGS if flag not in ("-emit-llvm", "-S")),
    "-Wno-unused-command-line-argument",
)

#: clang flags that compile unoptimized IR at -Oz, as ``clang -Oz`` compiles the source.
CLANG_OZ_FLAGS = ("-Oz", "-Wno-unused-command-line-argument")

#: What one more imported function costs a dynamically linked x86-64 binary, in bytes
#: counted as text + data: .dynsym 24, .rela.plt 24, .plt 16, .got.plt 8, .gnu.version 2,
#: and its name in .dynstr (about 6).
IMPORT_COST = 80

#: Longest failure reason kept in a log line.
_REASON_LIMIT = 1000


@dataclass(frozen=True)
class DriverOptions:
    """The driver's own options (``llm-compiler cc --results DIR ...``).

    Attributes:
        results: The ``--out`` folder of ``llm-compiler tune`` whose lists to use.
        save_ir: Folder where each unit's unoptimized IR is written.
        log: File each unit appends its JSON line to.
        oz: Never optimize beyond ``-Oz`` (a baseline build).
        predictor: The predictor spec asked for units with no tuned list (``none``: none).
        objective: What "smaller" means: ``binary-size`` (.text + .data, the default) or
            ``text-size`` (.text alone).
        cache: The object cache's folder (None: no cache).
        cache_size: Bound of the cache's objects, in bytes.
        whole_program: Objects also carry their unit's IR, and links try one list
            for the whole program (:mod:`llm_compiler.driver.whole_program`).
        direct: Answer unchanged commands without their front end
            (:mod:`llm_compiler.driver.direct`).
        jobs: The predictor's candidates measured at once.
    """

    results: Path | None = None
    save_ir: Path | None = None
    log: Path | None = None
    oz: bool = False
    predictor: str = "builtin"
    objective: Objective = DEFAULT_OBJECTIVE
    cache: Path | None = None
    cache_size: int = DEFAULT_MAX_BYTES
    whole_program: bool = False
    direct: bool = True
    jobs: int = 1


@dataclass(frozen=True)
class UnitLog:
    """One line of the driver's log: what became of one compile.

    Attributes:
        source: The source file, as the build named it.
        output: The object written.
        cwd: The directory the build ran the command in.
        program_id: The unit's id (hash of its IR); "" when it was not read.
        pipeline: The chosen ``opt -passes=`` text ("" when none was chosen).
        origin: Where the list came from: ``tuned``, ``predicted``, ``oz`` ("" if none).
        oz_size: The size of the ``default<Oz>`` object in ``objective`` (``.text + .data``
            by default; None when not built).
        clang_oz_size: Same for clang's own -Oz of the unit (None when not built).
        chosen_size: Same for the chosen list's object (None when not built).
        size: Same for the object kept (None when the compile failed).
        kept: ``chosen``, ``oz``, ``clang-oz`` (clang's -Oz of the IR) or ``clang`` (the
            build's line run through clang); for a whole-program link, ``native`` (the
            objects linked as the build links them), ``oz`` or ``chosen``.
        new_imports: Functions the kept chosen object calls that -Oz's does not.
        reason: Why the driver fell back or what the chooser said.
        seconds: Wall time of the whole command.
        llvm: The LLVM version and bin directory the unit was compiled with.
        objective: What the sizes measure (:mod:`llm_compiler.core.objective`).
        cached: The object came from the driver's cache (the rest of the line is the
            compile that made it, but ``seconds``).
        link: The line is a whole-program link (``output`` is the program or library).
        native_size: For a link: the size of the build's own (native) link.
    """

    source: str
    output: str
    cwd: str
    llvm: str = ""
    program_id: str = ""
    pipeline: str = ""
    origin: str = ""
    oz_size: int | None = None
    clang_oz_size: int | None = None
    chosen_size: int | None = None
    size: int | None = None
    kept: str = "clang"
    new_imports: tuple[str, ...] = ()
    reason: str = ""
    seconds: float = 0.0
    objective: str = DEFAULT_OBJECTIVE.value
    cached: bool = False
    link: bool = False
    native_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def ir_file_name(source: str, program: Program) -> str:
    """The name ``save_ir`` gives a unit's IR: ``<source stem>-<program id>.ll``.

    The id makes names unique across directories and rebuilds of a changed file.

    Example:
        >>> ir_file_name("src/blocksort.c", Program(name="b", ir="x"))
        'blocksort-2d711642b726b044.ll'
    """
    from llm_compiler.autotune.export import safe_name

    return f"{safe_name(Path(source).stem)}-{program.id}.ll"


def write_object(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically; a device (``-o /dev/null``) is written in place.

    Raises:
        FileNotFoundError: ``path``'s folder does not exist (clang does not make it either).
    """
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path.parent}: no such folder for the output {path}")
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(path.stat().st_mode):
            with path.open("wb") as stream:
                stream.write(data)
            return
    atomic_write_bytes(path, data)


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it (128 + N for death by signal N)."""
    return 128 - returncode if returncode < 0 else returncode


class _SetupError(Exception):
    """A chooser could not be made: carries the option's error out of the fallback."""

    def __init__(self, cause: InvalidInput) -> None:
        super().__init__(str(cause))
        self.cause = cause


def short_reason(error: BaseException) -> str:
    """An error as one line of at most :data:`_REASON_LIMIT` characters, for a log."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 3] + "..."


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
        command = classify(arguments)
        if self.whole_program:
            from llm_compiler.driver import whole_program

            if isinstance(command, UnitCompile):
                status, ir = self._compile_unit(command, started)
                return whole_program.embed_ir(self, command, ir) if status == 0 else status
            link = whole_program.ir_link(arguments)
            if link is not None:
                return whole_program.link(self, link, self._new_log(), started)
        if isinstance(command, Passthrough):
            return self._passthrough(arguments, command, started)
        return self._compile_unit(command, started)[0]

    # The build's own commands ------------------------------------------------

    def _clang(self, arguments: Sequence[str], *, input: bytes | None = None) -> CommandResult:
        return run_command([self.clang, *arguments], timeout=BUILD_TIMEOUT, input=input, check=False)

    def _show(self, data: bytes, stream: BinaryIO) -> None:
        if data:
            stream.write(data)
            stream.flush()

    def _passthrough(self, arguments: Sequence[str], command: Passthrough, started: float) -> int:
        data = sys.stdin.buffer.read() if reads_stdin(arguments) else None
        result = self._clang(arguments, input=data)
        self._show(result.stdout, self.stdout)
        self._show(result.stderr, self.stderr)
        if command.compiles:
            self._record(
                UnitLog(
                    source="",
                    output="",
                    cwd=os.getcwd(),
                    reason=f"left to clang: {command.reason}; {' '.join(arguments)}",
                    seconds=time.monotonic() - started,
                )
            )
        return exit_status(result.returncode)

    def _fallback(self, unit: UnitCompile, log: UnitLog, started: float, *, warned: bool) -> int:
        """The build's line through clang at -Oz; its output shown (stderr only on
        failure when the front end's warnings were shown already)."""
        result = self._clang(unit.fallback_arguments)
        self._show(result.stdout, self.stdout)
        if result.returncode != 0 or not warned:
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
            log = replace(log, reason=f"front end: {short_reason(error)}")
            return self._fallback(unit, log, started, warned=False), None
        if front.returncode != 0:
            reason = f"front end failed with status {exit_status(front.returncode)}"
            return self._fallback(unit, replace(log, reason=reason), started, warned=False), None
        self._show(front.stderr, self.stderr)
        key = self._key(unit.codegen_flags, front.stdout)
        if key is not None and self.save_ir is None and self._from_cache(key, unit, log, started):
            if self._remembers(key):
                self._remember(unit, key, _completed(self._listing, unit), front.stderr, since_ns)
            return 0, front.stdout
        # What does not depend on the choice runs beside it: clang's own -Oz of the IR,
        # the listing of the files the front end read, the lowering of -Oz's IR.
        background = ThreadPoolExecutor(max_workers=2)
        listing = background.submit(self._listing, unit) if self._remembers(key) else None
        try:
            with self._compiler() as compiler:
                chooser = self._chooser(compiler)
                program = compiler.load_ir(front.stdout_text, name=unit.source)
                clang_oz = background.submit(self._lower, unit, program.ir, CLANG_OZ_FLAGS)
                log = replace(log, program_id=program.id)
                if self.save_ir is not None:
                    atomic_write_text(self.save_ir / ir_file_name(unit.source, program), program.ir)
                choice = self._choose(compiler, chooser, unit, program, basis_front)
                log = replace(log, pipeline=choice.pipeline, origin=choice.origin, reason=choice.reason)
                obj, log = self._build(compiler, unit, program, log, clang_oz, background)
            log = replace(log, seconds=time.monotonic() - started)
            # Stored before the object is written: a build killed between the two finds
            # no object and compiles the unit again (a hit), never an object the cache lacks.
            store = self.cache if key is not None and log.kept in CACHEABLE else None
            if store is not None and key is not None:
                store.put(key, obj, log.to_json())
            write_object(Path(unit.output), obj)
        except _SetupError as error:  # a bad option: the build must stop, not fall back
            raise error.cause from error
        except Exception as error:  # any failure of the driver's steps: never lose the build
            status = self._fallback(unit, replace(log, reason=short_reason(error)), started, warned=True)
            return status, front.stdout
        finally:
            background.shutdown(wait=True, cancel_futures=True)
        self._record(log)
        if store is not None and key is not None:
            store.count("miss", log.seconds)
            if listing is not None:
                self._remember(unit, key, listing, front.stderr, since_ns)
        return 0, front.stdout

    def _llvm_text(self) -> str:
        return f"{self.toolchain.version} ({self.toolchain.bin_dir})"

    def _key(self, codegen_flags: Sequence[str], ir: bytes) -> str | None:
        """The cache key of IR lowered with ``codegen_flags`` (None without a cache)."""
        if self.cache is None:
            return None
        return unit_key(
            ir,
            language=self.language,
            codegen_flags=codegen_flags,
            llvm=self._llvm_text(),
            choosers=f"{self.objective.value}; {self.choosers_identity}",
        )

    def _from_cache(self, key: str, unit: UnitCompile, log: UnitLog, started: float) -> bool:
        """Writes the cached object of ``key``, if any; True when the unit is done."""
        assert self.cache is not None
        entry = self.cache.get(key)
        if entry is None:
            return False
        try:
            write_object(Path(unit.output), entry.object)
        except OSError:
            return False  # compiled as on a miss, which falls back to clang if this persists
        fields = {name: value for name, value in entry.record.items() if name in UnitLog.__dataclass_fields__}
        made = UnitLog(**{**fields, "new_imports": tuple(fields.get("new_imports", ()))})
        seconds = time.monotonic() - started
        self._record(
            replace(made, source=log.source, output=log.output, cwd=log.cwd, cached=True, seconds=seconds)
        )
        self.cache.count("hit", seconds)
        return True

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
                basis_front = _completed(self._clang, [*unit.plain_arguments, *FRONTEND_FLAGS, "-o", "-"])
            front = basis_front.result()
            if front.returncode == 0:
                basis = compiler.load_ir(front.stdout_text, name=unit.source)
                about = f"the unit without {' '.join(unit.position_flags)}"
        key = self._key(("(a choice)",), basis.ir.encode())  # None without a cache
        remembered = self.cache.choice(key) if self.cache is not None and key is not None else None
        if remembered is not None:
            choice = Choice(**remembered)
        else:
            choice = chooser.choose(basis) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
            if self.cache is not None and key is not None:
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

    def _compiler(self) -> contextlib.AbstractContextManager[Compiler]:
        if self.compiler is not None:
            return contextlib.nullcontext(self.compiler)
        # opt and llc as processes: one unit per process, the library would not pay off.
        from llm_compiler.core.compiler import Compiler

        # keep_ir: the -Oz and chosen lists were measured while choosing; lowering reuses their IR.
        return Compiler(
            self.toolchain, timeout=self.opt_timeout, engine="subprocess", workers=1, keep_ir=True
        )

    def _build(
        self,
        compiler: Compiler,
        unit: UnitCompile,
        program: Program,
        log: UnitLog,
        clang_oz: Future[bytes],
        background: Executor,
    ) -> tuple[bytes, UnitLog]:
        """Lowers -Oz (``default<Oz>``; clang's is ``clang_oz``) and the chosen list
        (``log.pipeline``), the two at once; returns the smallest object and the log
        line completed."""
        oz_lowered = background.submit(
            self._lower, unit, compiler.optimize(program, compiler.passes(OZ_PIPELINE))
        )
        chosen_lowered = None
        if log.pipeline != OZ_PIPELINE:  # a failure is kept in the future, reported below
            chosen_lowered = _completed(
                lambda: self._lower(unit, compiler.optimize(program, compiler.passes(log.pipeline)))
            )
        oz_object = oz_lowered.result()
        oz_size = self._size(oz_object)
        log = replace(log, oz_size=oz_size, size=oz_size, kept="oz")
        kept = oz_object
        try:
            clang_oz_object = clang_oz.result()
            clang_oz_size = self._size(clang_oz_object)
            log = replace(log, clang_oz_size=clang_oz_size)
            if clang_oz_size < oz_size:
                kept, log = clang_oz_object, replace(log, size=clang_oz_size, kept="clang-oz")
        except Exception as error:  # default<Oz>'s object stands
            log = replace(log, reason=f"{log.reason}; clang -Oz failed: {short_reason(error)}")
        if log.pipeline == OZ_PIPELINE:
            return kept, replace(log, chosen_size=oz_size)
        assert chosen_lowered is not None
        try:
            chosen = chosen_lowered.result()
            chosen_size = self._size(chosen)
        except Exception as error:  # the chosen list failed: -Oz is kept
            return kept, replace(log, reason=f"the chosen list failed, -Oz kept: {short_reason(error)}")
        log = replace(log, chosen_size=chosen_size)
        from llm_compiler.toolchain.elf import undefined_symbols

        imports = sorted(undefined_symbols(chosen) - undefined_symbols(kept))
        if log.size is not None and chosen_size + IMPORT_COST * len(imports) < log.size:
            return chosen, replace(log, size=chosen_size, kept="chosen", new_imports=tuple(imports))
        why = f"{len(imports)} new import(s) ({', '.join(imports)}) cost more" if imports else "not smaller"
        return kept, replace(log, reason=f"{log.reason}; {why} than -Oz here, -Oz kept")

    def _size(self, obj: bytes) -> int:
        """An object's size in the driver's objective."""
        from llm_compiler.toolchain.elf import berkeley_size

        size = berkeley_size(obj)
        return size.text if self.objective is Objective.TEXT_SIZE else size.binary_size

    def _lower(self, unit: UnitCompile, ir: str, flags: Sequence[str] = LOWER_FLAGS) -> bytes:
        """Lowers IR to an object with clang and the build's code-generation flags (by
        default without LLVM's optimization passes)."""
        result = run_command(
            [self.clang, *flags, *unit.codegen_flags, "-c", "-x", "ir", "-", "-o", "-"],
            timeout=BUILD_TIMEOUT,
            input=ir.encode(),
            subject=unit.source,
        )
        self._size(result.stdout)  # raises InvalidInput if it is not an object
        return result.stdout

    def _record(self, log: UnitLog) -> None:
        if self.log is not None:
            append_line(self.log, log.to_json())


def _completed(function: Callable[..., _T], *arguments: Any) -> Future[_T]:
    """``function(*arguments)`` run here, as a finished future (its error kept in it)."""
    future: Future[_T] = Future()
    try:
        future.set_result(function(*arguments))
    except Exception as error:
        future.set_exception(error)
    return future
