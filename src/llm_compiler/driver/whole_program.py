"""Whole-program mode: units kept as IR, one pass list chosen for the linked program.

``llm-compiler cc --whole-program`` optimizes at the link instead of unit by unit,
which lets a list work across units (inline a function of another file, drop what no
other unit calls) as ``clang -Oz -flto`` does, with the list chosen for the program:

1. **Compile.** A unit compile runs the build's line through clang at ``-Oz`` with
   :data:`BITCODE_COMPILE_FLAGS`: the object is the unit's unoptimized IR as bitcode
   (the same IR the per-unit mode optimizes). Static archives of such objects work
   when they are made with ``llvm-ar`` (its symbol table knows bitcode).
2. **Link.** A link with a bitcode input (an object, or a member of an archive) links
   through lld's LTO (:data:`LTO_LINK_FLAGS`). lld resolves the symbols, joins the IR
   and internalizes what the link does not export (a program's ``main``, a shared
   library's exported symbols), and runs the pipeline given to
   ``--lto-newpm-passes``. The first link runs ``default<Oz>`` and keeps the joined,
   internalized module (lld's ``--save-temps``); the driver's chooser picks a list
   for that module (tuned results by the module's hash, or the predictor, whose list
   is validated like a unit's); a second link runs the chosen list. The linked file
   with the smaller ``.text + .data`` (on a tie ``default<Oz>``'s) is written to the
   build's output. ``save_ir`` keeps the joined module (``<output>-<id>.ll``), so
   ``llm-compiler tune`` can tune the program itself.
3. **Fallback.** Any failure of these steps runs the build's link line through
   clang's own LTO link (clang with :data:`LTO_LINK_FLAGS`), with the reason in the
   log: the program is built, though not with the chosen list.

Links without bitcode inputs, and everything else, run as in the per-unit mode.
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
from llm_compiler.driver.arguments import UnitCompile, link_command
from llm_compiler.driver.cc import Driver, UnitLog, exit_status, short_reason
from llm_compiler.driver.choose import Choice
from llm_compiler.errors import ToolchainError
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.runner import CommandResult, run_command

#: What a unit compile adds to the build's line (at -Oz): unoptimized IR as bitcode.
BITCODE_COMPILE_FLAGS = ("-flto=full", "-Xclang", "-disable-llvm-passes")
#: What a link adds: full LTO in lld. ``--undefined-version``: a version script may
#: name symbols a library does not define, which GNU ld accepts and lld does not.
LTO_LINK_FLAGS = (
    "-flto=full",
    "-fuse-ld=lld",
    "-Wl,--undefined-version",
    "-Wno-unused-command-line-argument",
)
#: The first bytes of an LLVM bitcode file.
BITCODE_MAGIC = b"BC\xc0\xde"
_ARCHIVE_MAGIC = b"!<arch>\n"
#: lld's ``--save-temps`` name of the joined module after internalization.
_JOINED_SUFFIX = ".0.2.internalize.bc"


class LinkStepError(ToolchainError):
    """A step of the whole-program link failed (the build's link then runs as clang's LTO)."""


def is_bitcode_input(path: Path) -> bool:
    """Whether ``path`` is LLVM bitcode, or an archive with a bitcode member.

    Example:
        >>> is_bitcode_input(Path("/nonexistent.o"))
        False
    """
    try:
        with path.open("rb") as stream:
            head = stream.read(8)
            if head.startswith(BITCODE_MAGIC):
                return True
            if head != _ARCHIVE_MAGIC:
                return False
            data = stream.read()
    except OSError:
        return False
    return _archive_has_bitcode(data)


def _archive_has_bitcode(members: bytes) -> bool:
    """Walks the members of a (non-thin) ``ar`` archive, after its magic."""
    position = 0
    while position + 60 <= len(members):
        header = members[position : position + 60]
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            return False
        name = header[:16].rstrip()
        body = members[position + 60 : position + 60 + size]
        if name not in (b"/", b"//", b"/SYM64/", b"__.SYMDEF") and body.startswith(BITCODE_MAGIC):
            return True
        position += 60 + size + (size & 1)
    return False


def compile_bitcode(driver: Driver, unit: UnitCompile, log: UnitLog, started: float) -> int:
    """Step 1: the unit's unoptimized IR as a bitcode object, at the build's path."""
    result = driver._clang([*unit.fallback_arguments, *BITCODE_COMPILE_FLAGS])
    driver._show(result.stdout, driver.stdout)
    driver._show(result.stderr, driver.stderr)
    reason = "unoptimized IR kept for the link" if result.returncode == 0 else "front end failed"
    driver._record(replace(log, kept="bitcode", reason=reason, seconds=time.monotonic() - started))
    return exit_status(result.returncode)


def has_bitcode_inputs(arguments: Sequence[str]) -> bool:
    """Whether a command is a link with a bitcode input (step 2 applies)."""
    link = link_command(arguments)
    return link is not None and any(is_bitcode_input(Path(name)) for name in link.inputs)


def link(driver: Driver, arguments: Sequence[str], log: UnitLog, started: float) -> int:
    """Step 2 (step 3 on failure): links ``arguments`` with the program's own list.

    Args:
        driver: The driver (its clang, chooser, log and objective).
        arguments: The build's link line (the arguments after the compiler).
        log: The log line so far (where and with which LLVM).
        started: When the command started (``time.monotonic()``).

    Returns:
        The exit status of the link.
    """
    command = link_command(arguments)
    assert command is not None
    output = Path(command.output)
    log = replace(log, source="<link>", output=command.output, link=True)
    with tempfile.TemporaryDirectory(prefix="llm-compiler-link-") as scratch:
        try:
            kept, log = _choose_and_link(driver, arguments, Path(scratch), output.name, log)
            _install(kept, output)
        except Exception as error:  # any failure of the driver's steps: clang's own LTO link
            return _fallback(driver, arguments, output, replace(log, reason=short_reason(error)), started)
    driver._record(replace(log, seconds=time.monotonic() - started))
    return 0


def _choose_and_link(
    driver: Driver, arguments: Sequence[str], scratch: Path, name: str, log: UnitLog
) -> tuple[Path, UnitLog]:
    """Links at ``default<Oz>`` and with the chosen list in ``scratch``; returns the
    smaller linked file and the log line completed."""
    oz_output = scratch / "oz" / name
    result = _lto_link(driver, arguments, oz_output, OZ_PIPELINE, "--save-temps")
    driver._show(result.stdout, driver.stdout)
    driver._show(result.stderr, driver.stderr)
    oz_size = driver._size(oz_output.read_bytes())
    log = replace(log, oz_size=oz_size, size=oz_size, kept="oz")
    joined = Path(f"{oz_output}{_JOINED_SUFFIX}")
    ir = run_command(
        [driver.toolchain.tool("llvm-dis"), joined, "-o", "-"], timeout=driver.opt_timeout
    ).stdout_text
    with driver._compiler() as compiler:
        chooser = driver._chooser(compiler)
        program = compiler.load_ir(ir, name=name)
        log = replace(log, program_id=program.id)
        if driver.save_ir is not None:
            atomic_write_text(driver.save_ir / f"{name}-{program.id[:16]}.ll", program.ir)
        choice = chooser.choose(program) or Choice(OZ_PIPELINE, "oz", "the chooser had no list")
    log = replace(log, pipeline=choice.pipeline, origin=choice.origin, reason=choice.reason)
    if choice.pipeline == OZ_PIPELINE:
        return oz_output, log
    chosen_output = scratch / "chosen" / name
    try:
        _lto_link(driver, arguments, chosen_output, choice.pipeline)
        chosen_size = driver._size(chosen_output.read_bytes())
    except Exception as error:  # the chosen list failed at the link: default<Oz>'s is kept
        return oz_output, replace(log, reason=f"the chosen list failed, -Oz kept: {short_reason(error)}")
    log = replace(log, chosen_size=chosen_size)
    if chosen_size < oz_size:
        return chosen_output, replace(log, size=chosen_size, kept="chosen")
    return oz_output, replace(log, reason=f"{log.reason}; not smaller than -Oz linked, -Oz kept")


def _lto_link(
    driver: Driver, arguments: Sequence[str], output: Path, pipeline: str, *extra: str
) -> CommandResult:
    """Links the build's line to ``output`` with lld's LTO running ``pipeline``."""
    output.parent.mkdir(parents=True, exist_ok=True)
    link = link_command(arguments)
    assert link is not None
    result = driver._clang(
        [
            *link.with_output(str(output)),
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
    return result


def _install(linked: Path, output: Path) -> None:
    """Writes ``linked`` to the build's ``output`` atomically, keeping its mode."""
    temporary = output.with_name(f".{output.name}.llm-compiler-{os.getpid()}")
    try:
        shutil.copy2(linked, temporary)
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)


def _fallback(driver: Driver, arguments: Sequence[str], output: Path, log: UnitLog, started: float) -> int:
    """Step 3: the build's link line through clang's own LTO link."""
    result = driver._clang([*arguments, *LTO_LINK_FLAGS])
    driver._show(result.stdout, driver.stdout)
    driver._show(result.stderr, driver.stderr)
    size = None
    if result.returncode == 0:
        try:
            size = driver._size(output.read_bytes())
        except Exception:  # the size is for the log only
            size = None
    driver._record(replace(log, size=size, kept="clang-lto", seconds=time.monotonic() - started))
    return exit_status(result.returncode)
