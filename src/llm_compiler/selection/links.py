"""Whether a linked program may be installed: the selection layer's entry for whole-program links.

``cc --whole-program`` (:mod:`llm_compiler.driver.whole_program`) links a program the
build's own way (the *native* link) and with lld's LTO on the joined IR, once with
``default<Oz>`` and once with the list chosen for the joined module. What it installs
is a linker's output, not an object the gate has seen, so an LTO link replaces the
native one only after :class:`LinkJudge` has decided it, with a closed
:class:`~llm_compiler.selection.outcomes.Verdict` (:meth:`LinkJudge.decide` takes the
links smaller than the native one smallest first, until one passes):

1. **Determinism** (:meth:`LinkJudge.twice`): the link is made twice at once and must
   give the same bytes (the rule of :meth:`Selector.check_object
   <llm_compiler.selection.select.Selector.check_object>`), else ``nondeterministic``;
   a link that fails is ``compile-failure``.
2. **The list** (:meth:`LinkJudge.confirm`, for a chosen list): a list whose origin is
   in :data:`VOUCHED_ORIGINS` (``predicted``, ``tuned``) was validated on the joined
   module by its chooser; any other is checked here, as one list for the joined module
   (:meth:`Selector.check <llm_compiler.selection.select.Selector.check>`: a second
   compile, then the gate: its link, PassListEval's suites, its own run).
3. **The program's own run** (:meth:`LinkJudge.confirm`, where the link makes a
   program): the native link and the candidate run from one path (their ``argv[0]``,
   which a program may print), with no arguments, standard input from ``/dev/null``,
   an empty environment but ``LC_ALL=C``, in the build's working directory
   (read-only where bubblewrap works, as in :mod:`llm_compiler.validation.sandbox`),
   under :data:`RUN_TIMEOUT` seconds, a run past it tried once more with
   :data:`~llm_compiler.validation.checker.RETRY_FACTOR` times it. The two must end
   with the same exit status and standard output, else ``validation-failure``. A
   native run that does not exit 0 in time (it needs
   arguments, input or files it cannot get, or never ends) proves nothing: the run
   check is *unsupported* and the link is decided by steps 1 and 2 alone, which the
   detail says. A candidate whose run alone times out is rejected for this build only
   (:attr:`LinkCheck.transient`): nothing decided by it may be cached.
"""

from __future__ import annotations

import math
import shlex
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import Program
from llm_compiler.errors import CompileTimeout, InvalidPassList, ToolchainError
from llm_compiler.selection.outcomes import Verdict
from llm_compiler.selection.select import ObjectCheck, Policy, Selector
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.checker import retry_limits_for
from llm_compiler.validation.gate import Gate, load_suites
from llm_compiler.validation.sandbox import Limits, sandbox_command

#: Seconds the program's own run may take (a run past it is tried once more, longer).
RUN_TIMEOUT = 10.0

#: Origins of a choice whose chooser validated its list on the joined module itself.
VOUCHED_ORIGINS = frozenset({"predicted", "tuned"})


@dataclass(frozen=True)
class ProgramRun:
    """How one run of a linked program ended.

    Attributes:
        returncode: Its exit status as a shell reports it (128 + N: killed by signal N),
            with bubblewrap or without.
        stdout: What it wrote on its standard output.
        timed_out: It ran past its limits twice.
    """

    returncode: int
    stdout: bytes
    timed_out: bool = False

    def describe(self) -> str:
        """The run's end in words."""
        if self.timed_out:
            return "ran past its time limit twice"
        return f"exited with status {self.returncode}"


@dataclass(frozen=True)
class LinkedFile:
    """One LTO link of a whole-program link step and what was decided of it.

    Attributes:
        path: The linked file.
        size: Its size in the build's objective (None: the link failed).
        verdict: What was decided of it (``not-checked`` until :meth:`LinkJudge.decide`).
        detail: What was checked, or what failed.
        transient: The verdict rests on a timeout alone (:attr:`LinkCheck.transient`).
    """

    path: Path
    size: int | None
    verdict: Verdict
    detail: str
    transient: bool = False


@dataclass(frozen=True)
class LinkCheck:
    """What :class:`LinkJudge` decided of one linked file.

    Attributes:
        verdict: ``validated``, or why it may not be installed.
        detail: What was checked, or what failed.
        transient: The rejection rests on a timeout alone (a busy machine): it holds
            for this build only, and nothing decided by it may be cached.
    """

    verdict: Verdict
    detail: str
    transient: bool = False

    @property
    def passed(self) -> bool:
        """Whether the link may be installed."""
        return self.verdict is Verdict.VALIDATED


class LinkJudge:
    """Decides the LTO links of one whole-program link step (module docstring).

    Args:
        compiler: Compiles the joined module for a list's own check.
        native: The build's own (native) link, when the link makes a program to run;
            None for a shared library or a relocatable object (no run check).
        cwd: The build's working directory, where the programs run.
        run_as: Where each program is copied to run (its ``argv[0]``, which a program
            may print): one path for the native link and every candidate, in a
            folder the caller removes.
        objective: What "smaller" means for a list's own check.
        suites: PassListEval suites a list of an origin not vouched for must pass.
    """

    def __init__(
        self,
        compiler: Compiler,
        native: Path | None,
        cwd: Path,
        run_as: Path,
        *,
        objective: Objective = DEFAULT_OBJECTIVE,
        suites: Sequence[str] = ("builtin",),
    ) -> None:
        self.compiler = compiler
        self.native = native
        self.cwd = cwd
        self.run_as = run_as
        self.objective = objective
        self.suites = tuple(suites)
        # Step 1 only: the determinism rule of check_object, with no gate after it.
        self._twice = Selector(compiler, None, Policy(validate=False, objective=objective))
        self._reference: ProgramRun | None = None

    def twice(self, build: Callable[[], bytes], again: Callable[[], bytes], label: str) -> ObjectCheck:
        """Step 1: ``build`` and ``again`` (each links and returns the linked file's
        bytes; a failed link raises :class:`~llm_compiler.errors.CommandFailed`), started
        together. ``not-checked`` when they agree (steps 2 and 3 are
        :meth:`confirm`'s), else ``nondeterministic`` or ``compile-failure``."""
        # The linked file has no IR of its own: the determinism rule does not read it.
        return self._twice.check_object(Program(name=label, ir=""), build, label, again=again)

    def confirm(
        self,
        linked: Path,
        label: str,
        *,
        joined: Callable[[], Program] | None = None,
        pipeline: str = "",
        origin: str = "",
    ) -> LinkCheck:
        """Steps 2 and 3 for a link that passed :meth:`twice`.

        Args:
            linked: The linked file.
            label: What it is, for the messages.
            joined: Gives the joined module the list ran on (None with no list to
                check: the ``default<Oz>`` link); called only for a list to check here.
            pipeline: The list (with ``joined``).
            origin: Where the list came from (:data:`VOUCHED_ORIGINS` need no check here).
        """
        done = ["two links the same"]
        if joined is not None and pipeline:
            if origin in VOUCHED_ORIGINS:
                done.append(f"the list validated on the joined module ({origin})")
            else:
                listed = self.check_list(joined(), pipeline)
                if not listed.passed:
                    return listed
                done.append(f"the list on the joined module ({listed.detail})")
        if self.native is None:
            return LinkCheck(Verdict.VALIDATED, "passed: " + ", ".join(done) + " (a library: no run)")
        if self._reference is None:  # run once, for every candidate compared with it
            self._reference = run_program(self.native, self.cwd, RUN_TIMEOUT, self.run_as)
        reference = self._reference
        if reference.timed_out or reference.returncode != 0:
            why = f"the native link {reference.describe()} without arguments or input"
            note = f"; the program's own run: unsupported ({why}): checked by the rest alone"
            return LinkCheck(Verdict.VALIDATED, "passed: " + ", ".join(done) + note)
        run = run_program(linked, self.cwd, RUN_TIMEOUT, self.run_as)
        if run.timed_out:
            detail = (
                f"{label} ran past its time limit twice where the native link exits in time "
                "(a timeout is not kept: checked again next time)"
            )
            return LinkCheck(Verdict.VALIDATION_FAILURE, detail, transient=True)
        if (run.returncode, run.stdout) != (reference.returncode, reference.stdout):
            differs = "its output differs" if run.returncode == reference.returncode else run.describe()
            detail = f"the program's own run: {label} {differs}, the native link exited with status 0"
            return LinkCheck(Verdict.VALIDATION_FAILURE, detail)
        done.append("the program's own output and exit status")
        return LinkCheck(Verdict.VALIDATED, "passed: " + ", ".join(done))

    def decide(
        self,
        links: dict[str, LinkedFile],
        native_size: int,
        *,
        joined: Callable[[], Program],
        pipeline: str = "",
        origin: str = "",
    ) -> str:
        """Decides the links smaller than the native link, smallest first (``oz`` before
        ``chosen`` on a tie), with :meth:`confirm`, until one passes; gives every link its
        verdict in ``links`` and returns the name of the one kept (``native``: none).

        Args:
            links: The links that passed :meth:`twice` or not, by name (``oz``, ``chosen``).
            native_size: The native link's size.
            joined: Gives the joined module (for ``chosen``'s list, :meth:`confirm`).
            pipeline: The ``chosen`` link's list ("" when there is none).
            origin: Where that list came from.
        """
        kept = "native"
        smaller = [name for name, made in links.items() if made.size is not None and made.size < native_size]
        for name in sorted(smaller, key=lambda name: (links[name].size, name != "oz")):
            made = links[name]
            if kept != "native":
                links[name] = replace(
                    made, verdict=Verdict.NOT_SMALLER, detail=f"not smaller than the {kept} link"
                )
            elif made.verdict is Verdict.NOT_CHECKED:  # made the same twice: its list and its run
                listed = name == "chosen" and bool(pipeline)
                check = self.confirm(
                    made.path,
                    f"the {name} link",
                    joined=joined if listed else None,
                    pipeline=pipeline if listed else "",
                    origin=origin if listed else "",
                )
                links[name] = replace(
                    made, verdict=check.verdict, detail=check.detail, transient=check.transient
                )
                kept = name if check.passed else kept
        for name, made in links.items():
            if made.verdict is Verdict.NOT_CHECKED:  # made twice the same, not smaller than native
                links[name] = replace(
                    made, verdict=Verdict.NOT_SMALLER, detail="not smaller than the native link"
                )
        return kept

    def check_list(self, program: Program, pipeline: str) -> LinkCheck:
        """Step 2 for a list no chooser vouched for: a second compile of the joined
        module, then the gate (its link, the suites, its own run)."""
        selector = Selector(
            self.compiler,
            Gate(self.compiler, load_suites(self.suites, self.compiler)),
            Policy(salvage=False, objective=self.objective),
        )
        try:
            passes = self.compiler.passes(pipeline)
        except InvalidPassList as error:
            return LinkCheck(Verdict.PARSE_ERROR, f"the list: {error}")
        size, output_hash, error_text = selector.measure(program)(passes)
        if size is None:
            return LinkCheck(Verdict.COMPILE_FAILURE, f"the joined module: {error_text}")
        verdict, detail, _, result = selector.check(program, passes, size, output_hash)
        return LinkCheck(verdict, detail, transient=result is not None and result.transient)


def what_became(links: dict[str, LinkedFile], kept: str) -> list[str]:
    """What a link step's log line says of each link of ``links`` once
    :meth:`LinkJudge.decide` kept ``kept`` (``{kept}`` in the text: the link kept)."""
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


def makes_program(arguments: Sequence[str], linked: Path) -> bool:
    """Whether a link line writes a program one can run: not ``-shared``, not ``-r``
    (in any of the forms ``-Wl,`` and ``-Xlinker`` give them), and ``linked`` (what it
    wrote) is an ELF executable or position-independent executable, not an object."""
    flags = set()
    for argument in arguments:
        flags.update(argument.split(",")[1:] if argument.startswith("-Wl,") else [argument])
    if flags & {"-shared", "--shared", "-Bshareable", "-r", "--relocatable", "-relocatable"}:
        return False
    try:
        with linked.open("rb") as stream:
            header = stream.read(18)
    except OSError:
        return False
    if len(header) < 18 or header[:4] != b"\x7fELF":
        return False
    # e_type, in the byte order e_ident[EI_DATA] names (1: little-endian): 2 EXEC, 3 DYN.
    return int.from_bytes(header[16:18], "little" if header[5] == 1 else "big") in (2, 3)


def run_program(binary: Path, cwd: Path, timeout: float, run_as: Path) -> ProgramRun:
    """Runs ``binary``, copied to ``run_as`` (its ``argv[0]``), in ``cwd`` with no
    arguments and standard input from ``/dev/null`` (module docstring, step 3); a run
    past ``timeout`` is tried once more with
    :func:`~llm_compiler.validation.checker.retry_limits_for` its limits."""
    run_as.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, run_as)
    limits = Limits(timeout=timeout, cpu_seconds=max(1, math.ceil(timeout)))
    run = _run_once(run_as, cwd, limits)
    return _run_once(run_as, cwd, retry_limits_for(limits)) if run.timed_out else run


def _run_once(binary: Path, cwd: Path, limits: Limits) -> ProgramRun:
    with tempfile.TemporaryDirectory(prefix="llm-compiler-link-run-") as scratch:
        # Standard input is run_command's /dev/null (opened here: the sandbox's /dev is
        # read-only); the outputs are files in the scratch folder, bounded by the limits.
        stdout, stderr = Path(scratch) / "stdout", Path(scratch) / "stderr"
        redirect = f'exec "$@" >{shlex.quote(str(stdout))} 2>{shlex.quote(str(stderr))}'
        argv = ["/bin/sh", "-c", redirect, "sh", "/usr/bin/env", "-i", "LC_ALL=C", str(binary.resolve())]
        command = _in_folder(sandbox_command(argv, Path(scratch), limits), binary.resolve().parent, cwd)
        try:
            result = run_command(
                command,
                timeout=limits.timeout,
                cwd=cwd,
                env={"LC_ALL": "C"},
                check=False,
                subject=binary.name,
            )
        except CompileTimeout:
            return ProgramRun(128 + signal.SIGKILL, b"", timed_out=True)
        except ToolchainError:  # the sandbox could not be started: the run proves nothing
            return ProgramRun(127, b"")
        output = stdout.read_bytes() if stdout.exists() else b""
    # Killed at the CPU-time limit (SIGXCPU; bubblewrap reports a signal as 128 + it).
    status = 128 - result.returncode if result.returncode < 0 else result.returncode
    return ProgramRun(status, output, timed_out=status == 128 + signal.SIGXCPU)


def _in_folder(command: list[str], binary_folder: Path, cwd: Path) -> list[str]:
    """The sandbox's ``command`` (it writes in its own folder only) run in ``cwd``: with
    bubblewrap, the build's folder and the binary's are bound read-only before the
    sandbox's own folder, and the run starts in the build's folder."""
    if "--chdir" not in command:  # no bubblewrap: run_command's cwd is where it runs
        return command
    where = command.index("--bind")
    folders = [str(cwd.resolve()), str(binary_folder)]
    binds = [part for folder in folders for part in ("--ro-bind", folder, folder)]
    command = [*command[:where], *binds, *command[where:]]
    at = command.index("--chdir")
    command[at + 1] = str(cwd.resolve())
    return command


__all__ = [
    "RUN_TIMEOUT",
    "VOUCHED_ORIGINS",
    "LinkCheck",
    "LinkJudge",
    "LinkedFile",
    "ProgramRun",
    "makes_program",
    "run_program",
    "what_became",
]
