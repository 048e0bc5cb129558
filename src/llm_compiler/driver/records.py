"""What the driver's steps share: its options, the log line of a command, and helpers.

:class:`DriverOptions` are ``llm-compiler cc``'s own options; :class:`UnitLog` is the
line each command appends to the driver's log (:mod:`llm_compiler.driver.log` reads
them back). The unit compile (:mod:`llm_compiler.driver.cc`) and the whole-program
link (:mod:`llm_compiler.driver.whole_program`) both write them, and both use the
helpers here for exit statuses, failure reasons and outputs.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import Program
from llm_compiler.driver.cache import DEFAULT_MAX_BYTES
from llm_compiler.files import atomic_write_bytes

_T = TypeVar("_T")


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
        verdict: For a link: the closed :class:`~llm_compiler.selection.outcomes.Verdict`
            label of the decision that kept the linked file
            (:mod:`llm_compiler.driver.whole_program`); "" for a unit.
        arguments: For a unit: the build's line as the driver split it (without the
            compiler, response files expanded), so the unit can be compiled again
            (:mod:`llm_compiler.driver.flag_savings`); () for a link or an older line.
        frames: Which functions of the kept object were given a frame pointer because
            that made it smaller (:mod:`llm_compiler.driver.frames`), and the sizes before
            and after; "" when none was.
        frame_functions: Those functions' names (the IR a whole-program build carries
            gives them the same attribute).
        sections: The kept object's (or linked file's) bytes by group of
            :data:`~llm_compiler.toolchain.elf.SECTION_GROUPS`
            (:func:`~llm_compiler.toolchain.elf.section_sizes`); None when not built or
            not ELF.
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
    verdict: str = ""
    arguments: tuple[str, ...] = ()
    frames: str = ""
    frame_functions: tuple[str, ...] = ()
    sections: dict[str, int] | None = None

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


def completed(function: Callable[..., _T], *arguments: Any) -> Future[_T]:
    """``function(*arguments)`` run here, as a finished future (its error kept in it)."""
    future: Future[_T] = Future()
    try:
        future.set_result(function(*arguments))
    except Exception as error:
        future.set_exception(error)
    return future
