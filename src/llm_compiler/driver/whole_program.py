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
   in a scratch folder, and the linked file with the smallest ``.text + .data`` is
   written to the build's output (on a tie, the first):

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
3. **Fallback.** A failure of the LTO links keeps the native link, the reason in
   the log line (``"link": true``). A native link that fails is the build's own
   error: it is shown with its exit status.

So a whole-program build is never larger than the per-unit build of the same
sources, which is never larger than -Oz unit by unit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.driver.arguments import LinkCommand, UnitCompile, link_command
from llm_compiler.driver.cc import Driver, UnitLog, exit_status, short_reason
from llm_compiler.driver.choose import Choice
from llm_compiler.errors import ToolchainError
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.runner import run_command

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


class LinkStepError(ToolchainError):
    """An LTO link of the whole-program step failed (the native link is kept)."""


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


def embed_ir(driver: Driver, unit: UnitCompile, ir: bytes | None) -> int:
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
                [driver.toolchain.tool("llvm-as"), "-", "-o", bitcode],
                input=ir,
                timeout=driver.opt_timeout,
            )
            run_command(
                [
                    driver.toolchain.tool("llvm-objcopy"),
                    f"--add-section={IR_SECTION}={bitcode}",
                    f"--set-section-flags={IR_SECTION}=exclude",
                    output,
                ],
                timeout=driver.opt_timeout,
            )
    except Exception as error:  # the object is whole either way (objcopy replaces it at the end)
        driver.stderr.write(
            f"llm-compiler cc: warning: {output} links without its IR: {short_reason(error)}\n".encode()
        )
        driver.stderr.flush()
    return 0


def ir_link(arguments: Sequence[str]) -> LinkCommand | None:
    """The command as a link with an input that carries IR (step 2 applies), else None."""
    link = link_command(arguments)
    return link if link is not None and any(carries_ir(Path(name)) for name in link.inputs) else None


def link(driver: Driver, command: LinkCommand, log: UnitLog, started: float) -> int:
    """Steps 2 and 3: links ``command`` natively, with ``default<Oz>`` and with the
    program's own list; writes the smallest to the build's output.

    Args:
        driver: The driver (its clang, chooser, log and objective).
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
        result = driver._clang(command.with_output(str(native)))
        driver._show(result.stdout, driver.stdout)
        driver._show(result.stderr, driver.stderr)
        if result.returncode != 0:  # the build's own error: shown, as clang would
            seconds = time.monotonic() - started
            driver._record(replace(log, kept="clang", reason="the link failed", seconds=seconds))
            return exit_status(result.returncode)
        size = driver._size(native.read_bytes())
        log = replace(log, size=size, kept="native", native_size=size)
        kept = native
        try:
            kept, log = _lto_links(driver, command, Path(scratch), native, log)
        except Exception as error:  # any failure of the LTO steps: the native link is kept
            log = replace(log, reason=f"native link kept: {short_reason(error)}")
        _install(kept, output)
    driver._record(replace(log, seconds=time.monotonic() - started))
    return 0


def _lto_links(
    driver: Driver, command: LinkCommand, scratch: Path, native: Path, log: UnitLog
) -> tuple[Path, UnitLog]:
    """The ``oz`` and ``chosen`` links; returns the smallest of the three and the log."""
    assert log.size is not None
    kept, best = native, log.size
    oz_output = scratch / "oz" / native.name
    _lto_link(driver, command, oz_output, OZ_PIPELINE, "--save-temps")
    oz_size = driver._size(oz_output.read_bytes())
    log = replace(log, oz_size=oz_size)
    if oz_size < best:
        kept, best, log = oz_output, oz_size, replace(log, size=oz_size, kept="oz")
    try:
        return _chosen_link(driver, command, oz_output, kept, best, log)
    except Exception as error:  # the chooser or its list failed: the smaller link so far is kept
        return kept, replace(log, reason=f"{log.kept} link kept: {short_reason(error)}")


def _chosen_link(
    driver: Driver, command: LinkCommand, oz_output: Path, kept: Path, best: int, log: UnitLog
) -> tuple[Path, UnitLog]:
    """Chooses a list for the joined module of the ``oz`` link and links with it, if it
    is another list; returns the smaller of it and ``kept`` (``best`` bytes)."""
    joined = Path(f"{oz_output}{_JOINED_SUFFIX}")
    ir = run_command(
        [driver.toolchain.tool("llvm-dis"), joined, "-o", "-"], timeout=driver.opt_timeout
    ).stdout_text
    # The key leaves out the first line, the ModuleID: it names the scratch folder.
    key = driver._key(
        _CHOICE_KEY, ir.partition("\n")[2].encode() if ir.startswith("; ModuleID") else ir.encode()
    )
    choice = _remembered_choice(driver, key)
    if choice is None or driver.save_ir is not None:
        with driver._compiler() as compiler:
            chooser = driver._chooser(compiler)
            program = compiler.load_ir(ir, name=oz_output.name)
            log = replace(log, program_id=program.id)
            if driver.save_ir is not None:
                atomic_write_text(driver.save_ir / f"{oz_output.name}-{program.id}.ll", program.ir)
            choice = choice or chooser.choose(program) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
        if key is not None and driver.cache is not None:
            record = {"pipeline": choice.pipeline, "origin": choice.origin, "reason": choice.reason}
            driver.cache.put(key, b"", record)
    log = replace(log, pipeline=choice.pipeline, origin=choice.origin, reason=choice.reason)
    if choice.pipeline == OZ_PIPELINE:
        return kept, log
    chosen_output = oz_output.parent.parent / "chosen" / oz_output.name
    try:
        _lto_link(driver, command, chosen_output, choice.pipeline)
        chosen_size = driver._size(chosen_output.read_bytes())
    except Exception as error:  # the chosen list failed at the link: the smaller other is kept
        return kept, replace(log, reason=f"the chosen list failed, {log.kept} kept: {short_reason(error)}")
    log = replace(log, chosen_size=chosen_size)
    if chosen_size < best:
        return chosen_output, replace(log, size=chosen_size, kept="chosen")
    return kept, replace(log, reason=f"{log.reason}; not smaller linked, {log.kept} kept")


def _remembered_choice(driver: Driver, key: str | None) -> Choice | None:
    """The choice made before for the same joined module, from the driver's cache."""
    if key is None or driver.cache is None:
        return None
    entry = driver.cache.get(key)
    if entry is None:
        return None
    try:
        record = entry.record
        reason = f"{record['reason']} (the choice of an earlier link of this program)"
        return Choice(str(record["pipeline"]), str(record["origin"]), reason)
    except (KeyError, TypeError):
        return None


def _lto_link(driver: Driver, command: LinkCommand, output: Path, pipeline: str, *extra: str) -> None:
    """Links the build's line to ``output`` with lld's LTO running ``pipeline``."""
    output.parent.mkdir(parents=True, exist_ok=True)
    result = driver._clang(
        [
            *command.with_output(str(output)),
            *LTO_LINK_FLAGS,
            "-Xlinker",
            f"--lto-newpm-passes={pipeline}",
            *(f"-Wl,{flag}" for flag in extra),
        ]
    )
    if result.returncode != 0:
        raise LinkStepError(
            f"the LTO link with {pipeline} failed (status {result.returncode}): "
            f"{result.stderr.decode(errors='replace')[-2000:]}"
        )


def _install(linked: Path, output: Path) -> None:
    """Writes ``linked`` to the build's ``output`` atomically, keeping its mode."""
    temporary = output.with_name(f".{output.name}.llm-compiler-{os.getpid()}")
    try:
        shutil.copy2(linked, temporary)
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)
