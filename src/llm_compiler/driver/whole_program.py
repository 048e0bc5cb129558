"""Whole-program mode: objects that carry their IR, one pass list tried for the program.

Per unit, no list can drop a function that no other file calls, nor inline across
files. ``llm-compiler cc --whole-program`` adds a whole-program step at the link,
without giving up what the per-unit build achieves:

1. **Compile.** A unit compiles exactly as in the per-unit mode (its chosen list,
   validated, never larger than -Oz, from the cache on a rebuild), and the object also
   carries the unit's unoptimized IR as bitcode in an excluded ``.llvm.lto`` section
   (:data:`IR_SECTION`: the layout of clang's ``-ffat-lto-objects``). Linkers that do
   not look for it drop it; static archives of such objects work with any ``ar``.
2. **Link.** A link with such inputs (objects, or archive members) runs three ways
   in a scratch folder:

   * ``native``: the build's own line: the per-unit objects, linked as the build
     links them;
   * ``oz``: lld's LTO on the carried IR (``--fat-lto-objects``): lld resolves the
     symbols, joins the IR, internalizes what the link does not export (a program's
     ``main``, a shared library's version script), and runs ``default<Oz>``
     (``--lto-newpm-passes``); the joined module after internalization is kept
     (``--save-temps``);
   * ``chosen``: the same link with the list the driver's chooser picks for that
     joined module: ``tune`` results by the module's hash (``save_ir`` writes it as
     ``<output>-<id>.ll``), else the predictor's list, validated as for a unit. The
     choice is kept in the driver's cache under the joined module's IR (with the
     LLVM and what the choosers know), so relinking the same program does not choose
     and validate again.
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
   error: it is shown with its exit status.

The files a link writes besides its output (``-Wl,-Map=``, ``--out-implib``...:
:meth:`~llm_compiler.driver.arguments.LinkCommand.side_outputs`) are written where the
build names them by the native link (which fails as the build's own link would), and
in a scratch folder by the LTO links; when an LTO link is installed, its side outputs
replace the native link's.

So a whole-program build is never larger than the per-unit build of the same
sources, which is never larger than -Oz unit by unit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.driver.arguments import LinkCommand, UnitCompile, link_command
from llm_compiler.driver.cache import ObjectCache
from llm_compiler.driver.choose import Choice, Chooser
from llm_compiler.driver.records import UnitLog, exit_status
from llm_compiler.errors import CommandFailed, reason_of
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command

if TYPE_CHECKING:  # loaded on a miss only, by the driver; the selection layer by a link only
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.core.program import Program
    from llm_compiler.selection import LinkJudge, Verdict

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
#: What a whole program's choice is kept under in the cache, in place of a unit's codegen flags.
_CHOICE_KEY = ("<whole-program choice>",)
#: The first bytes of an LLVM bitcode file.
BITCODE_MAGIC = b"BC\xc0\xde"
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
    """Steps 2 to 4: links ``command`` natively, with ``default<Oz>`` and with the
    program's own list; writes the smallest that passes its checks (else the native
    link) to the build's output.

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
    with tempfile.TemporaryDirectory(prefix="llm-compiler-link-") as scratch:
        native = Path(scratch) / "native" / output.name
        native.parent.mkdir()
        result = steps.clang(command.with_output(str(native)))
        steps.show(result.stdout, steps.stdout)
        steps.show(result.stderr, steps.stderr)
        if result.returncode != 0:  # the build's own error: shown, as clang would
            seconds = time.monotonic() - started
            steps.record(replace(log, kept="clang", reason="the link failed", seconds=seconds))
            return exit_status(result.returncode)
        size = steps.size(native.read_bytes())
        log = replace(log, size=size, kept="native", native_size=size)
        kept = native
        try:
            kept, log = _lto_links(steps, command, Path(scratch), native, log)
        except Exception as error:  # any failure of the LTO steps: the native link is kept
            log = replace(log, reason=f"native link kept: {reason_of(error)}", verdict="compile-failure")
        _install(kept, output)
        if kept != native:  # the native link wrote its own where the build named them
            for name, written in command.side_outputs(str(_side_folder(kept))):
                if Path(written).exists():
                    _install(Path(written), Path(name))
    steps.record(replace(log, seconds=time.monotonic() - started))
    return 0


def _lto_links(
    steps: LinkSteps, command: LinkCommand, scratch: Path, native: Path, log: UnitLog
) -> tuple[Path, UnitLog]:
    """The ``oz`` and ``chosen`` links, each made twice at once, and the selection
    layer's decision (:class:`~llm_compiler.selection.links.LinkJudge`): the smallest
    link that passes its checks, else the native one; returns it and the log line."""
    from llm_compiler.selection import LinkJudge, Verdict, makes_program

    native_size = log.size
    assert native_size is not None
    with steps.compiler() as compiler:
        runnable = native if makes_program(command.arguments, native) else None
        judge = LinkJudge(compiler, runnable, Path.cwd(), scratch / "run" / native.name)
        oz_output = scratch / "oz" / native.name
        made = judge.twice(
            partial(_linked, steps, command, oz_output, OZ_PIPELINE, "--save-temps"),
            partial(_linked, steps, command, scratch / "oz-again" / native.name, OZ_PIPELINE),
            "the default<Oz> link",
        )
        if made.verdict is Verdict.COMPILE_FAILURE:
            return native, replace(log, reason=f"native link kept: {made.detail}", verdict=made.verdict.value)
        links = {"oz": _Link(oz_output, steps.size(made.obj), made.verdict, made.detail)}
        log = replace(log, oz_size=links["oz"].size)
        choice: Choice | None = None
        program: Program | None = None
        fresh, key = False, None
        try:
            choice, program, fresh, key, log = _choose(steps, compiler, oz_output, log)
            said = choice.reason
            log = replace(log, pipeline=choice.pipeline, origin=choice.origin)
        except Exception as error:  # the chooser failed: the oz and native links remain
            said = f"{{kept}} link kept: {reason_of(error)}"
        if choice is not None and choice.pipeline != OZ_PIPELINE:
            chosen_output = scratch / "chosen" / native.name
            made = judge.twice(
                partial(_linked, steps, command, chosen_output, choice.pipeline),
                partial(_linked, steps, command, scratch / "chosen-again" / native.name, choice.pipeline),
                f"the link with {choice.pipeline}",
            )
            size = steps.size(made.obj) if made.obj else None
            links["chosen"] = _Link(chosen_output, size, made.verdict, made.detail)
            log = replace(log, chosen_size=size)

        def joined() -> Program:  # read only for a list no chooser vouched for
            return program or compiler.load_ir(_joined_ir(steps, oz_output), name=oz_output.name)

        kept = _decide(judge, links, native_size, choice, joined)
        transient = any(made.transient for made in links.values())  # a timeout decides nothing for good
        if fresh and choice is not None and not choice.transient and not transient:
            _remember(steps, key, choice)
    reason = "; ".join(part for part in (said, *_what_became(links, kept)) if part).replace("{kept}", kept)
    decided = links.get("chosen", links["oz"])
    if kept == "native":
        return native, replace(log, kept=kept, reason=reason, verdict=decided.verdict.value)
    path, size = links[kept].path, links[kept].size
    return path, replace(log, kept=kept, size=size, reason=reason, verdict=decided.verdict.value)


def _decide(
    judge: LinkJudge,
    links: dict[str, _Link],
    native_size: int,
    choice: Choice | None,
    joined: Callable[[], Program],
) -> str:
    """Decides the LTO links smaller than the native link, smallest first (``oz`` before
    ``chosen`` on a tie), until one passes; gives every link its verdict in ``links``
    and returns the name of the one kept (``native``: none)."""
    from llm_compiler.selection import Verdict

    kept = "native"
    smaller = [name for name, made in links.items() if made.size is not None and made.size < native_size]
    for name in sorted(smaller, key=lambda name: (links[name].size, name != "oz")):
        made = links[name]
        if kept != "native":
            links[name] = replace(
                made, verdict=Verdict.NOT_SMALLER, detail=f"not smaller than the {kept} link"
            )
        elif made.verdict is Verdict.NOT_CHECKED:  # made the same twice: its list and its run
            listed = choice if name == "chosen" else None
            check = judge.confirm(
                made.path,
                f"the {name} link",
                joined=joined if listed is not None else None,
                pipeline=listed.pipeline if listed is not None else "",
                origin=listed.origin if listed is not None else "",
            )
            links[name] = replace(made, verdict=check.verdict, detail=check.detail, transient=check.transient)
            kept = name if check.passed else kept
    for name, made in links.items():
        if made.verdict is Verdict.NOT_CHECKED:  # made twice the same, not smaller than native
            links[name] = replace(
                made, verdict=Verdict.NOT_SMALLER, detail="not smaller than the native link"
            )
    return kept


def _what_became(links: dict[str, _Link], kept: str) -> list[str]:
    """What the log line says of each LTO link (``{kept}``: the link kept)."""
    from llm_compiler.selection import Verdict

    said = []
    for name, made in sorted(links.items(), key=lambda item: item[0] != "chosen"):
        if name == kept:
            said.append(f"the {name} link {made.detail}")
        elif made.verdict is Verdict.COMPILE_FAILURE and name == "chosen":
            said.append(f"the chosen list failed, {{kept}} kept: {made.detail}")
        elif made.verdict is Verdict.NOT_SMALLER and name == "chosen":
            said.append("not smaller linked, {kept} kept")
        elif made.verdict is not Verdict.NOT_SMALLER:
            said.append(f"the {name} link was rejected ({made.verdict.value}: {made.detail}), {{kept}} kept")
    return said


@dataclass(frozen=True)
class _Link:
    """One LTO link of a whole-program link step and what was decided of it."""

    path: Path
    size: int | None
    verdict: Verdict
    detail: str
    transient: bool = False


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


def _lto_link(steps: LinkSteps, command: LinkCommand, output: Path, pipeline: str, *extra: str) -> None:
    """Links the build's line to ``output`` with lld's LTO running ``pipeline``.

    Raises:
        LinkStepError: The link failed.
    """
    _side_folder(output).mkdir(parents=True, exist_ok=True)
    line = [
        *command.with_output(str(output), str(_side_folder(output))),
        *LTO_LINK_FLAGS,
        "-Xlinker",
        f"--lto-newpm-passes={pipeline}",
        *(f"-Wl,{flag}" for flag in extra),
    ]
    result = steps.clang(line)
    if result.returncode != 0:
        raise LinkStepError(
            f"the LTO link with {pipeline} failed (status {result.returncode}): "
            f"{result.stderr.decode(errors='replace')[-2000:]}",
            command=line,
            returncode=result.returncode,
            stderr=result.stderr.decode(errors="replace"),
        )


def _linked(steps: LinkSteps, command: LinkCommand, output: Path, pipeline: str, *extra: str) -> bytes:
    """:func:`_lto_link`, then the linked file's bytes."""
    _lto_link(steps, command, output, pipeline, *extra)
    return output.read_bytes()


def _side_folder(linked: Path) -> Path:
    """Where the link writing ``linked`` writes its side outputs."""
    return linked.parent / "side-outputs"


def _install(linked: Path, output: Path) -> None:
    """Writes ``linked`` to the build's ``output`` atomically, keeping its mode."""
    temporary = output.with_name(f".{output.name}.llm-compiler-{os.getpid()}")
    try:
        shutil.copy2(linked, temporary)
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)
