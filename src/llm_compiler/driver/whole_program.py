"""Whole-program mode: objects that carry their IR, one pass list tried for the program.

Per unit, no list can drop a function that no other file calls, nor inline across
files. ``llm-compiler cc --whole-program`` adds a whole-program step at the link,
without giving up what the per-unit build achieves:

1. **Compile.** A unit compiles exactly as in the per-unit mode (its chosen list,
   validated, never larger than -Oz, from the cache on a rebuild), and the object also
   carries the unit's unoptimized IR as bitcode in an excluded ``.llvm.lto`` section
   (:data:`IR_SECTION`: the layout of clang's ``-ffat-lto-objects``). Linkers that do
   not look for it drop it; static archives of such objects work with any ``ar``.
2. **Link.** A link with such inputs (objects, or archive members) runs three ways,
   the native link and both ``oz`` links started together (none waits for another; an
   LTO link is installed only after the native one succeeded):

   * ``native``: the build's own line as it is, writing the build's output: the
     per-unit objects, linked as the build links them (a linker writes the output's
     name into a program linked with a version script, so no other line gives the
     build's bytes);
   * ``oz``: lld's LTO on the carried IR (``--fat-lto-objects``): lld resolves the
     symbols, joins the IR, internalizes what the link does not export (a program's
     ``main``, a shared library's version script), and runs ``default<Oz>``
     (``--lto-newpm-passes``); the joined module after internalization is kept
     (``--save-temps=internalize``);
   * ``chosen``: the same link with the list the driver's chooser picks for that
     joined module: ``tune`` results by the module's hash (``save_ir`` writes it as
     ``<output>-<id>.ll``), else the predictor's list, validated as for a unit. The
     choice is kept in the driver's cache under the joined module's IR (and what a
     unit's key holds), so another link of the same program does not choose again.
3. **Decision.** Each LTO link is made twice at once, and the selection layer
   (:class:`~llm_compiler.selection.links.LinkJudge`) decides them smallest first
   (``oz`` before ``chosen`` on a tie): the two must be the same bytes; the chosen
   list must have been validated on the joined module (by a chooser whose origin is
   ``predicted`` or ``tuned``, else by the gate here); and where the link makes a
   program, it must run as the native link runs (no arguments, no input, in the
   build's folder; a native run that cannot prove anything leaves that check out, and
   the log line says so). The first that passes is written to the build's output,
   else the native link. The log line's ``verdict`` is the closed
   :class:`~llm_compiler.selection.outcomes.Verdict` of the decision: of the chosen
   list when there was one (``validated`` when its link is installed), else of the
   ``oz`` link. A decision that rests on a timeout alone holds for this build only:
   the choice is not cached.
4. **Fallback.** A failure of the LTO links keeps the native link, the reason in
   the log line (``"link": true``). A native link that fails is the build's own
   error: it is shown with its exit status, nothing is written, once the LTO links
   started beside it have ended.
5. **Relink.** With a cache, what a link installed is kept under a key of its line, its
   folder, the bytes of the files it reads (its inputs, the libraries its ``-l`` name
   in its ``-L`` folders or clang's, the files its options name: a version script...),
   lld's file and what a unit's key holds (LLVM, choosers, objective): the same link of
   unchanged files is written from the cache, with its mode and the native link's
   messages, and logged with the line of the link that made it (``"cached": true``),
   running no link. Not cached: a link with side outputs, an input or a library of the
   build's folder that is not an object, archive or bitcode (a source, a linker
   script), a ``-l`` found nowhere; a decision resting on a timeout, a killed link or
   a failure of the driver's steps.

The files a link writes besides its output (``-Wl,-Map=``, ``--out-implib``...:
:meth:`~llm_compiler.driver.arguments.LinkCommand.side_outputs`) are written where the
build names them by the native link (which fails as the build's own link would), and
in a scratch folder by the LTO links; when an LTO link is installed, its side outputs
replace the native link's.

So a whole-program build is never larger than the per-unit build of the same
sources, which is never larger than -Oz unit by unit.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.driver.arguments import LinkCommand, UnitCompile, link_command
from llm_compiler.driver.cache import ObjectCache
from llm_compiler.driver.choose import Choice, Chooser
from llm_compiler.driver.direct import tool_identity
from llm_compiler.driver.link_inputs import BITCODE_MAGIC, read_files
from llm_compiler.driver.records import UnitLog, exit_status
from llm_compiler.errors import CommandFailed, CompileTimeout, reason_of
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command

if TYPE_CHECKING:  # loaded on a miss only, by the driver
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.core.program import Program

#: The section that carries a unit's IR in its object (what lld's ``--fat-lto-objects`` reads).
IR_SECTION = ".llvm.lto"
#: What an LTO link adds to the build's line. ``--undefined-version``: a version script
#: may name symbols a library does not define, which GNU ld accepts and lld does not.
LTO_LINK_FLAGS = (
    "-flto=full",
    "-fuse-ld=lld",
    "-Wl,--fat-lto-objects",
    "-Wl,--undefined-version",
    "-Wno-unused-command-line-argument",
)
#: lld's ``-O2``: a constant string that ends another is stored once, as its tail (GNU ld
#: does this by default; C leaves it unspecified whether string literals share storage).
#: Not added where the build's line sets the linker's optimization level itself.
MERGE_TAILS = "-Wl,-O2"
#: What a whole program's choice is kept under in the cache, in place of a unit's codegen flags.
_CHOICE_KEY = ("<whole-program choice>",)
#: What a linked file is kept under in the cache (step 5), in place of a unit's codegen flags.
_RELINK_KEY = ("<whole-program link>",)
#: The fields of a kept link's record that hold the linked file's permissions and what
#: its native link wrote (stdout, stderr, as Latin-1 text: any bytes, kept as they were).
_MODE, _SHOWN = "mode", "shown"
#: What the ``oz`` link keeps of lld's intermediate files: the joined module alone.
_SAVE_JOINED = "--save-temps=internalize"
_SECTION_NAME = IR_SECTION.encode() + b"\0"
#: lld's ``--save-temps`` name of the joined module after internalization.
_JOINED_SUFFIX = ".0.2.internalize.bc"


@dataclass(frozen=True)
class LinkSteps:
    """What the whole-program step uses of the driver that runs it.

    Attributes:
        toolchain: The LLVM in use.
        clang: Runs clang (the build's compiler) with arguments; its result.
        show: Writes a command's output to a stream.
        stdout: The command's standard output.
        stderr: The command's standard error.
        record: Appends a line to the driver's log.
        size: An object's or linked file's size in the driver's objective.
        key: The cache key of IR under flags (None without a cache).
        compiler: A compiler for choosing (a context manager).
        chooser: The driver's chooser, made with that compiler.
        cache: The driver's cache (None: none).
        save_ir: Where to write IR chosen for (None: nowhere).
        timeout: Seconds an LLVM tool may run.
    """

    toolchain: Toolchain
    clang: Callable[[Sequence[str]], CommandResult]
    show: Callable[[bytes, BinaryIO], None]
    stdout: BinaryIO
    stderr: BinaryIO
    record: Callable[[UnitLog], None]
    size: Callable[[bytes], int]
    key: Callable[[Sequence[str], bytes], str | None]
    compiler: Callable[[], AbstractContextManager[Compiler]]
    chooser: Callable[[Compiler], Chooser]
    cache: ObjectCache | None
    save_ir: Path | None
    timeout: float


class LinkStepError(CommandFailed):
    """An LTO link of the whole-program step failed (that link is not kept)."""


def carries_ir(path: Path) -> bool:
    """Whether an input file holds IR for the link: bitcode, an object with the IR
    section, or an archive with such a member (its section name is looked for).

    Example:
        >>> carries_ir(Path("/nonexistent.o"))
        False
    """
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if data.startswith(BITCODE_MAGIC):
        return True
    if data.startswith(b"\x7fELF"):
        return _SECTION_NAME in data
    return data.startswith(b"!<arch>\n") and (_SECTION_NAME in data or BITCODE_MAGIC in data)


def embed_ir(steps: LinkSteps, unit: UnitCompile, ir: bytes | None) -> int:
    """Step 1: adds the unit's unoptimized IR to the object the driver just wrote.

    The object stays valid without it: when this fails, the unit links natively only
    (a warning says why) and the build goes on.
    """
    if ir is None:  # the front end failed and clang compiled the line: no IR
        return 0
    output = Path(unit.output)
    try:
        with tempfile.TemporaryDirectory(prefix="llm-compiler-ir-") as scratch:
            bitcode = Path(scratch) / "unit.bc"
            run_command(
                [steps.toolchain.tool("llvm-as"), "-", "-o", bitcode],
                input=ir,
                timeout=steps.timeout,
            )
            run_command(
                [
                    steps.toolchain.tool("llvm-objcopy"),
                    f"--add-section={IR_SECTION}={bitcode}",
                    f"--set-section-flags={IR_SECTION}=exclude",
                    output,
                ],
                timeout=steps.timeout,
            )
    except Exception as error:  # the object is whole either way (objcopy replaces it at the end)
        steps.stderr.write(
            f"llm-compiler cc: warning: {output} links without its IR: {reason_of(error)}\n".encode()
        )
        steps.stderr.flush()
    return 0


def ir_link(arguments: Sequence[str]) -> LinkCommand | None:
    """The command as a link with an input that carries IR (step 2 applies), else None."""
    link = link_command(arguments)
    return link if link is not None and any(carries_ir(Path(name)) for name in link.inputs) else None


def link(steps: LinkSteps, command: LinkCommand, log: UnitLog, started: float) -> int:
    """Steps 2 to 5: links ``command`` natively, with ``default<Oz>`` and with the
    program's own list; writes the smallest that passes its checks (else the native
    link) to the build's output, or what the cache holds for the same link.

    Args:
        steps: What it uses of the driver (its clang, chooser, log and objective).
        command: The build's link line (:func:`ir_link`).
        log: The log line so far (where and with which LLVM).
        started: When the command started (``time.monotonic()``).

    Returns:
        The exit status of the link.
    """
    output = Path(command.output)
    log = replace(log, source="<link>", output=command.output, link=True)
    key = _relink_key(steps, command)
    cached = _cached_link(steps, key) if key is not None and steps.save_ir is None else None
    if cached is not None:  # the same line, the same files: what its earlier link installed
        _install(output, cached.data, cached.mode)
        steps.show(cached.stdout, steps.stdout)
        steps.show(cached.stderr, steps.stderr)
        steps.record(replace(cached.log, cwd=log.cwd, cached=True, seconds=time.monotonic() - started))
        return 0
    lto: _LtoLinks | None = None
    try:
        # Left in the order that ends the pool (its links waited for) before the scratch folder.
        with (
            tempfile.TemporaryDirectory(prefix="llm-compiler-link-") as scratch,
            ThreadPoolExecutor(max_workers=2) as pool,
        ):
            lto = _LtoLinks(steps, command, Path(scratch), output.name, pool)
            oz = lto.start("oz", OZ_PIPELINE, _SAVE_JOINED)  # the native link's result is not needed
            # The build's own line, writing the build's output: a linker may write the output's
            # name into it (a version script's base version), so only this line gives its bytes.
            native = output
            result = steps.clang(command.arguments)
            steps.show(result.stdout, steps.stdout)
            steps.show(result.stderr, steps.stderr)
            if result.returncode == 0:
                kept, log, lasting = _kept_link(steps, lto, oz, native, log)
                data, mode = kept.read_bytes(), _mode(kept)
                if lasting and key is not None and steps.cache is not None:
                    # Stored before the output is written: a build killed between the two links again.
                    shown = [result.stdout.decode("latin-1"), result.stderr.decode("latin-1")]
                    steps.cache.put(key, data, {**log.to_json(), _MODE: mode, _SHOWN: shown})
                _install(output, data, mode)
                if kept != native:  # the native link wrote its own where the build named them
                    for name, written in command.side_outputs(str(_side_folder(kept))):
                        if Path(written).exists():
                            _install(Path(name), Path(written).read_bytes(), _mode(Path(written)))
    finally:  # after the pool: no link is writing there any more
        if lto is not None:
            lto.remove_pinned()
    if result.returncode != 0:  # the build's own error: shown, as clang would
        seconds = time.monotonic() - started
        steps.record(replace(log, kept="clang", reason="the link failed", seconds=seconds))
        return exit_status(result.returncode)
    steps.record(replace(log, seconds=time.monotonic() - started))
    return 0


def _kept_link(
    steps: LinkSteps, lto: _LtoLinks, oz: _Pair, native: Path, log: UnitLog
) -> tuple[Path, UnitLog, bool]:
    """Steps 3 and 4 after a native link that succeeded: the linked file to install, its
    log line, and whether the decision may be kept for a relink (step 5)."""
    size = steps.size(native.read_bytes())
    log = replace(log, size=size, kept="native", native_size=size)
    try:
        kept, log, settled = _lto_links(steps, lto, oz, native, log)
    except Exception as error:  # any failure of the LTO steps: the native link is kept
        log = replace(log, reason=f"native link kept: {reason_of(error)}", verdict="compile-failure")
        return native, log, False
    return kept, log, settled and not lto.transient


def _lto_links(
    steps: LinkSteps, lto: _LtoLinks, oz: _Pair, native: Path, log: UnitLog
) -> tuple[Path, UnitLog, bool]:
    """The ``oz`` links (started), the ``chosen`` ones, and the selection layer's
    decision (:class:`~llm_compiler.selection.links.LinkJudge`): the smallest link that
    passes its checks, else the native one; returns it, the log line, and whether the
    decision holds beyond this build (no timeout, no failure of the chooser in it)."""
    from llm_compiler.selection import LinkJudge, Verdict, makes_program
    from llm_compiler.selection.links import LinkedFile, what_became

    native_size = log.size
    assert native_size is not None
    with steps.compiler() as compiler:
        runnable = native if makes_program(lto.command.arguments, native) else None
        judge = LinkJudge(compiler, runnable, Path.cwd(), lto.scratch / "run" / native.name)
        oz_output = lto.path("oz")
        made = judge.twice(oz[0].result, oz[1].result, "the default<Oz> link")
        if made.verdict is Verdict.COMPILE_FAILURE:
            log = replace(log, reason=f"native link kept: {made.detail}", verdict=made.verdict.value)
            return native, log, True
        links = {"oz": LinkedFile(oz_output, steps.size(made.obj), made.verdict, made.detail)}
        log = replace(log, oz_size=links["oz"].size)
        choice: Choice | None = None
        program: Program | None = None
        fresh, key, chosen = False, None, True
        try:
            choice, program, fresh, key, log = _choose(steps, compiler, oz_output, log)
            said = choice.reason
            log = replace(log, pipeline=choice.pipeline, origin=choice.origin)
        except Exception as error:  # the chooser failed: the oz and native links remain
            said, chosen = f"{{kept}} link kept: {reason_of(error)}", False
        if choice is not None and choice.pipeline != OZ_PIPELINE:
            pair = lto.start("chosen", choice.pipeline)
            made = judge.twice(pair[0].result, pair[1].result, f"the link with {choice.pipeline}")
            size = steps.size(made.obj) if made.obj else None
            links["chosen"] = LinkedFile(lto.path("chosen"), size, made.verdict, made.detail)
            log = replace(log, chosen_size=size)

        def joined() -> Program:  # read only for a list no chooser vouched for
            return program or compiler.load_ir(_joined_ir(steps, oz_output), name=oz_output.name)

        listed = {"pipeline": choice.pipeline, "origin": choice.origin} if choice is not None else {}
        kept = judge.decide(links, native_size, joined=joined, **listed)
        transient = any(made.transient for made in links.values())  # a timeout decides nothing for good
        if fresh and choice is not None and not choice.transient and not transient:
            _remember(steps, key, choice)
    settled = chosen and not transient and not (choice is not None and choice.transient)
    reason = "; ".join(part for part in (said, *what_became(links, kept)) if part).replace("{kept}", kept)
    decided = links.get("chosen", links["oz"])
    if kept == "native":
        return native, replace(log, kept=kept, reason=reason, verdict=decided.verdict.value), settled
    path, size = links[kept].path, links[kept].size
    return path, replace(log, kept=kept, size=size, reason=reason, verdict=decided.verdict.value), settled


def _choose(
    steps: LinkSteps, compiler: Compiler, oz_output: Path, log: UnitLog
) -> tuple[Choice, Program | None, bool, str | None, UnitLog]:
    """The list for the joined module of the ``oz`` link: remembered from an earlier
    link of it, else the chooser's. Returns it, the joined module when it was read
    (None: remembered), whether the choice is new, its cache key and the log line."""
    ir = _joined_ir(steps, oz_output)
    # The key leaves out the first line, the ModuleID: it names the scratch folder.
    key = steps.key(
        _CHOICE_KEY, ir.partition("\n")[2].encode() if ir.startswith("; ModuleID") else ir.encode()
    )
    choice = _remembered_choice(steps, key)
    if choice is not None and steps.save_ir is None:
        return choice, None, False, key, log
    chooser = steps.chooser(compiler)
    program = compiler.load_ir(ir, name=oz_output.name)
    log = replace(log, program_id=program.id)
    if steps.save_ir is not None:
        atomic_write_text(steps.save_ir / f"{oz_output.name}-{program.id}.ll", program.ir)
    fresh = choice is None
    choice = choice or chooser.choose(program) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
    return choice, program, fresh, key, log


def _joined_ir(steps: LinkSteps, oz_output: Path) -> str:
    """The joined module of the ``oz`` link, after internalization, as text."""
    joined = Path(f"{oz_output}{_JOINED_SUFFIX}")
    return run_command(
        [steps.toolchain.tool("llvm-dis"), joined, "-o", "-"], timeout=steps.timeout
    ).stdout_text


def _remember(steps: LinkSteps, key: str | None, choice: Choice) -> None:
    """Keeps the choice for the joined module in the driver's cache (when it has one)."""
    if key is not None and steps.cache is not None:
        record = {"pipeline": choice.pipeline, "origin": choice.origin, "reason": choice.reason}
        steps.cache.put(key, b"", record)


def _remembered_choice(steps: LinkSteps, key: str | None) -> Choice | None:
    """The choice made before for the same joined module, from the driver's cache."""
    if key is None or steps.cache is None:
        return None
    entry = steps.cache.get(key)
    if entry is None:
        return None
    try:
        record = entry.record
        reason = f"{record['reason']} (the choice of an earlier link of this program)"
        return Choice(str(record["pipeline"]), str(record["origin"]), reason)
    except (KeyError, TypeError):
        return None


class _LtoLinks:
    """The LTO links of one link step, each made twice at once in ``pool``, in
    ``<scratch>/<name>/`` and ``<scratch>/<name>-again/``; ``transient`` once one timed
    out or was killed (a busy machine: nothing decided with it may be cached).

    A line with a version script is the exception: lld writes the output's path, as
    ``-o`` gives it, into such a file (its base version), so both builds of a link write
    one path that does not depend on the scratch folder, one after the other:
    ``.llm-compiler-lto/<output name>/<link>/<output name>`` beside the build's output
    (:attr:`pinned`; removed by :meth:`remove_pinned`). Its bytes are then the same in
    every build of the tree."""

    def __init__(
        self, steps: LinkSteps, command: LinkCommand, scratch: Path, name: str, pool: ThreadPoolExecutor
    ) -> None:
        self.steps, self.command, self.scratch, self.name, self.pool = steps, command, scratch, name, pool
        self.transient = False
        scripted = any("version-script" in argument for argument in command.arguments)
        self.pinned = Path(command.output).parent / PINNED_FOLDER / name if scripted else None

    def path(self, link: str) -> Path:
        """Where the link ``link`` (``oz``, ``chosen``) writes the linked file."""
        return (self.pinned if self.pinned is not None else self.scratch) / link / self.name

    def start(self, link: str, pipeline: str, *extra: str) -> _Pair:
        """Starts the two links with ``pipeline`` (the first with the linker flags ``extra``)."""
        first = self.pool.submit(self._linked, self.path(link), pipeline, *extra)
        if self.pinned is None:
            return first, self.pool.submit(self._linked, self.path(f"{link}-again"), pipeline)

        def again() -> bytes:  # the same path, once the first build's bytes are read
            first.result()
            self.path(link).unlink()
            return self._linked(self.path(link), pipeline)

        return first, self.pool.submit(again)

    def remove_pinned(self) -> None:
        """Removes the pinned links' folder (and the shared parent when it is empty)."""
        if self.pinned is not None:
            shutil.rmtree(self.pinned, ignore_errors=True)
            with contextlib.suppress(OSError):
                self.pinned.parent.rmdir()

    def _linked(self, output: Path, pipeline: str, *extra: str) -> bytes:
        """Links the build's line to ``output`` with lld's LTO running ``pipeline``; the
        linked file's bytes.

        Raises:
            LinkStepError: The link failed.
        """
        _side_folder(output).mkdir(parents=True, exist_ok=True)
        own = self.command.with_output(str(output), str(_side_folder(output)))
        line = [
            *own,
            *LTO_LINK_FLAGS,
            *(() if any(argument.startswith("-Wl,-O") for argument in own) else (MERGE_TAILS,)),
            "-Xlinker",
            f"--lto-newpm-passes={pipeline}",
            *(f"-Wl,{flag}" for flag in extra),
        ]
        try:
            result = self.steps.clang(line)
        except CompileTimeout:
            self.transient = True
            raise
        if result.returncode != 0:
            self.transient = self.transient or result.returncode < 0
            raise LinkStepError(
                f"the LTO link with {pipeline} failed (status {result.returncode}): "
                f"{result.stderr.decode(errors='replace')[-2000:]}",
                command=line,
                returncode=result.returncode,
                stderr=result.stderr.decode(errors="replace"),
            )
        return output.read_bytes()


#: Where the LTO links of a line with a version script are made, beside the build's output.
PINNED_FOLDER = ".llm-compiler-lto"
#: The two links of one LTO link (:meth:`_LtoLinks.start`): each gives the linked file's bytes.
_Pair = tuple[Future[bytes], Future[bytes]]


def _side_folder(linked: Path) -> Path:
    """Where the link writing ``linked`` writes its side outputs."""
    return linked.parent / "side-outputs"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _install(output: Path, data: bytes, mode: int) -> None:
    """Writes ``data`` to the build's ``output`` atomically, with the permissions ``mode``."""
    temporary = output.with_name(f".{output.name}.llm-compiler-{os.getpid()}")
    try:
        temporary.write_bytes(data)
        temporary.chmod(mode)
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)


# Step 5: a relink of unchanged files, from the cache -----------------------------------


@dataclass(frozen=True)
class _CachedLink:
    """A link's file, permissions, log line and native link's stdout and stderr, cached."""

    data: bytes
    mode: int
    log: UnitLog
    stdout: bytes
    stderr: bytes


def _cached_link(steps: LinkSteps, key: str) -> _CachedLink | None:
    """What the cache holds for the link of ``key``; None if nothing (or nothing usable)."""
    assert steps.cache is not None
    entry = steps.cache.get(key)
    if entry is None:
        return None
    fields = {name: value for name, value in entry.record.items() if name in UnitLog.__dataclass_fields__}
    try:
        made = UnitLog(**{**fields, "new_imports": tuple(fields.get("new_imports", ()))})
        stdout, stderr = (str(text).encode("latin-1") for text in entry.record[_SHOWN])
        return _CachedLink(entry.object, int(entry.record[_MODE]), made, stdout, stderr)
    except (TypeError, KeyError, ValueError):
        return None  # linked as on a miss


def _relink_key(steps: LinkSteps, command: LinkCommand) -> str | None:
    """The cache key of the link's output (step 5), or None: no cache, or a link that
    is not cached."""
    if steps.cache is None or command.side_outputs("."):
        return None
    try:
        files = read_files(command, steps.clang)
        lld = tool_identity(steps.toolchain.tool("ld.lld"))
    except OSError:
        return None
    if files is None:
        return None
    line = {
        "arguments": command.arguments,
        "cwd": os.getcwd(),
        "LIBRARY_PATH": os.environ.get("LIBRARY_PATH"),
        "lld": lld,
        "files": files,
    }
    return steps.key(_RELINK_KEY, json.dumps(line).encode())
