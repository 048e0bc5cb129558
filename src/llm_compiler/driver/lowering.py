"""Lowering a unit's optimized IR to objects, and which of them the unit keeps.

The driver (:mod:`llm_compiler.driver.cc`) lowers each candidate list's IR with clang
and the build's code-generation flags (every flag of the line but the front end's own:
:data:`~llm_compiler.driver.options.FRONTEND_ONLY`)::

    clang -Oz -Xclang -disable-llvm-passes <codegen flags> -c -x ir - -o -

so ``-fPIC``, ``-m32``, ``-g``, ``-ffunction-sections``, ``-W...``... are honoured
(:func:`lower`).

**Never larger than -Oz.** ``default<Oz>`` is lowered the same way, and clang itself
compiles the unoptimized IR at ``-Oz`` (:data:`CLANG_OZ_FLAGS`: what ``clang -Oz`` on
the source gives; clang's own -Oz pipeline can differ from ``opt``'s ``default<Oz>``,
in either direction). :func:`keep_smallest` keeps the object with the smallest size in
the driver's objective (:func:`object_size`); on a tie ``default<Oz>``'s, then clang's,
before the chosen list's. A list that makes the object call a function the -Oz object
does not (a libc ``memset`` for a loop, say) is charged :data:`IMPORT_COST` bytes per
such function: linked dynamically, each new import adds a dynamic symbol, its name, a
PLT entry, a relocation and a GOT slot to the binary, which the object's own size does
not show. So are a position-independent unit's absolute pointers (:func:`link_cost`):
each is a 24-byte dynamic relocation in the linked program or library (x86-64), so a
list that turns a switch into a table of pointers where -Oz makes a table of offsets
is not kept unless its code saves more.

**Backend diagnostics.** What a lowering prints is compared, not shown
(:mod:`llm_compiler.driver.diagnostics`): it names IR lines, not the source. A
candidate whose lowering says something other than clang's own -Oz of the unit says
is not kept. When clang's -Oz says anything (``-Wframe-larger-than=``, the ``warning``
attribute...), the build's line is compiled once more by clang at ``-Oz`` (to a
scratch object, :func:`clang_says`) and its stderr is shown in place of the front
end's: clang's exact words, once per unit; if it fails (``-Werror``), its status is
the command's and no object is written. Such a unit is not cached, so a rebuild says
it again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from llm_compiler.core.objective import Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.arguments import UnitCompile
from llm_compiler.driver.diagnostics import Lowered, LoweringFailed, backend_messages
from llm_compiler.driver.records import UnitLog, completed, exit_status
from llm_compiler.errors import InvalidInput, reason_of
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS
from llm_compiler.toolchain.runner import run_command

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler

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


def object_size(obj: bytes, objective: Objective) -> int:
    """An object's size in ``objective`` (its text size, else its binary size).

    Raises:
        InvalidInput: ``obj`` is not an object.
    """
    from llm_compiler.toolchain.elf import berkeley_size

    size = berkeley_size(obj)
    return size.text if objective is Objective.TEXT_SIZE else size.binary_size


def lower(
    clang: Path,
    unit: UnitCompile,
    ir: str,
    size: Callable[[bytes], int],
    flags: Sequence[str] = LOWER_FLAGS,
) -> Lowered:
    """Lowers IR to an object with ``clang`` and the build's code-generation flags (by
    default without LLVM's optimization passes); keeps what clang says.

    Args:
        clang: The clang (or clang++) that stands for the build's compiler.
        unit: The unit whose code-generation flags are used.
        ir: The IR to lower.
        size: The driver's objective, which also checks that the output is an object.
        flags: The flags before the unit's (:data:`LOWER_FLAGS` or :data:`CLANG_OZ_FLAGS`).

    Raises:
        LoweringFailed: clang exited non-zero (its stderr in the error).
        InvalidInput: What clang wrote is not an object.
    """
    result = run_command(
        [clang, *flags, *unit.codegen_flags, _QUIET, "-c", "-x", "ir", "-", "-o", "-"],
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
    size(result.stdout)  # raises InvalidInput if it is not an object
    return Lowered(result.stdout, result.stderr)


def clang_says(clang: Path, unit: UnitCompile) -> tuple[int, bytes]:
    """The exit status and stderr of the build's line compiled by clang at ``-Oz``
    (to a scratch object, without its dependency-file options)."""
    with tempfile.TemporaryDirectory(prefix="llm-compiler-cc-") as scratch:
        scratch_object = os.path.join(scratch, "unit.o")
        result = run_command(
            [clang, *unit.listing_arguments, "-Oz", "-c", "-o", scratch_object],
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    return exit_status(result.returncode), result.stderr


def keep_smallest(
    *,
    compiler: Compiler,
    program: Program,
    log: UnitLog,
    clang_oz: Future[Lowered],
    background: Executor,
    known: bytes,
    lower: Callable[[str], Lowered],
    size: Callable[[bytes], int],
    link_cost: Callable[[bytes], int] = lambda obj: 0,
) -> tuple[bytes, UnitLog, bool]:
    """Lowers -Oz (``default<Oz>``; clang's is ``clang_oz``) and the chosen list
    (``log.pipeline``), the two at once; returns the smallest object whose lowering
    says what clang's -Oz of the unit says, the log line completed, and whether clang's
    -Oz said anything of its own (module docstring).

    Args:
        compiler: Runs the lists (its kept IR: they were measured while choosing).
        program: The unit's unoptimized IR.
        log: The unit's log line so far, with the chosen list.
        clang_oz: clang's own -Oz of the unit (lowered with :data:`CLANG_OZ_FLAGS`).
        background: Where -Oz's lowering runs beside the chosen list's.
        known: What the front end said (its stderr).
        lower: Lowers IR with the unit's flags (:func:`lower`).
        size: The driver's objective (:func:`object_size`).
        link_cost: Bytes the link adds for an object beyond its own size (the dynamic
            relocations of its absolute pointers in a position-independent unit,
            :func:`link_cost`): the objects are compared with it added, so a list that
            trades code for pointer tables is not kept where the program would grow.

    Raises:
        LoweringFailed: clang's -Oz (or default<Oz>'s lowering) fails on a backend
            diagnostic (``-Werror``): so does the build's line, which the caller runs.
    """
    oz_lowered = background.submit(lower, compiler.optimize(program, compiler.passes(OZ_PIPELINE)))
    chosen_lowered = None
    if log.pipeline != OZ_PIPELINE:  # a failure is kept in the future, reported below
        chosen_lowered = completed(lambda: lower(compiler.optimize(program, compiler.passes(log.pipeline))))
    oz = oz_lowered.result()
    oz_size = size(oz.obj)
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
        clang_oz_size = size(clang.obj)
        log = replace(log, clang_oz_size=clang_oz_size)
        clang_said = backend_messages(clang.stderr, known)
        if clang_said != says:  # what clang -Oz says is what the build says
            reason = f"{log.reason}; default<Oz>'s lowering says other than clang -Oz's"
            kept, log = clang.obj, replace(log, size=clang_oz_size, kept="clang-oz", reason=reason)
        elif clang_oz_size + link_cost(clang.obj) < oz_size + link_cost(oz.obj):
            kept, log = clang.obj, replace(log, size=clang_oz_size, kept="clang-oz")
        says = clang_said
    if log.pipeline == OZ_PIPELINE:
        return kept, replace(log, chosen_size=oz_size), bool(says)
    assert chosen_lowered is not None
    try:
        chosen = chosen_lowered.result()
        chosen_size = size(chosen.obj)
    except Exception as error:  # the chosen list failed: -Oz is kept
        reason = f"the chosen list failed, -Oz kept: {reason_of(error)}"
        return kept, replace(log, reason=reason), bool(says)
    log = replace(log, chosen_size=chosen_size)
    if backend_messages(chosen.stderr, known) != says:
        reason = f"{log.reason}; the chosen list's lowering says other than clang -Oz's, -Oz kept"
        return kept, replace(log, reason=reason), bool(says)
    from llm_compiler.toolchain.elf import undefined_symbols

    imports = sorted(undefined_symbols(chosen.obj) - undefined_symbols(kept))
    relocations = link_cost(chosen.obj) - link_cost(kept)
    if log.size is not None and chosen_size + IMPORT_COST * len(imports) + relocations < log.size:
        kept, log = chosen.obj, replace(log, size=chosen_size, kept="chosen", new_imports=tuple(imports))
        return kept, log, bool(says)
    why = f"{len(imports)} new import(s) ({', '.join(imports)}) cost more" if imports else "not smaller"
    if relocations > 0 and log.size is not None and chosen_size + IMPORT_COST * len(imports) < log.size:
        why = f"{relocations} bytes of dynamic relocations it adds cost more"
    return kept, replace(log, reason=f"{log.reason}; {why} than -Oz here, -Oz kept"), bool(says)


def link_cost(ir: str) -> Callable[[bytes], int]:
    """What the link adds for a unit's object (:func:`keep_smallest`'s ``link_cost``):
    in position-independent code each absolute pointer becomes a dynamic relocation
    (:func:`~llm_compiler.toolchain.elf.dynamic_relocation_bytes`); elsewhere nothing."""
    from llm_compiler.toolchain.elf import dynamic_relocation_bytes
    from llm_compiler.toolchain.ir import is_position_independent

    if not is_position_independent(ir):
        return lambda obj: 0

    def cost(obj: bytes) -> int:
        try:
            return dynamic_relocation_bytes(obj)
        except InvalidInput:  # not ELF: nothing this reader can count
            return 0

    return cost
