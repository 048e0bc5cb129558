"""Flag savings: what flags the user could add would save, measured on their own build.

Some of an object's bytes are there for tools and language features a target may not
need: unwind tables (``.eh_frame``) for debuggers, profilers and C++ exceptions, frame
pointers for profilers that walk them, stack canaries for hardening, exception tables
and RTTI for C++ code that uses neither. Whether a program can do without them is the
user's decision, so the driver never adds these flags; ``llm-compiler cc --summary LOG
--flag-savings`` measures what each would save and says what it costs.

Each compile line of the log (:class:`~llm_compiler.driver.records.UnitLog` with its
``arguments``) is compiled again by clang at ``-Oz`` in its directory (the build's line,
its ``-O`` levels replaced by ``-Oz``, its object and dependency file written to a
scratch folder), then once more for each :data:`CANDIDATES` entry that can apply to the
line (the flags go last, so they win). The saving of a flag is the sum of the objects'
binary sizes without it less with it, over the units where it applied, split by section
group (:func:`~llm_compiler.toolchain.elf.section_sizes`). A line that cannot be
compiled again (no arguments recorded, source gone, compile error) is named and counted,
never fatal; a unit where a candidate does not compile (``-fno-exceptions`` on code that
throws) is named under that candidate.

Example::

    report = measure_flag_savings(read_log(Path("cc.jsonl")), progress=print)
    print(report.text())
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.driver.arguments import UnitCompile, classify
from llm_compiler.errors import LlmCompilerError, reason_of
from llm_compiler.toolchain.elf import SECTION_GROUPS, section_sizes
from llm_compiler.toolchain.llvm import find_toolchain
from llm_compiler.toolchain.runner import run_command

#: Units compiled at once.
DEFAULT_WORKERS = 2

#: Seconds one compile of a unit may run.
COMPILE_TIMEOUT = 600.0


class CompileError(LlmCompilerError):
    """clang could not compile a unit again (with a candidate's flags, or at all)."""


def _last_of(arguments: Sequence[str], *flags: str) -> str | None:
    """The last of ``flags`` on the line (the one clang obeys), or None."""
    found = [argument for argument in arguments if argument in flags]
    return found[-1] if found else None


def _async_unwind_on(unit: UnitCompile) -> bool:
    args = unit.listing_arguments
    return _last_of(args, "-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables") != (
        "-fno-asynchronous-unwind-tables"
    )


def _any_unwind_on(unit: UnitCompile) -> bool:
    args = unit.listing_arguments
    return (
        _async_unwind_on(unit)
        or _last_of(args, "-funwind-tables", "-fno-unwind-tables") != "-fno-unwind-tables"
    )


def _keeps_frame_pointer(unit: UnitCompile) -> bool:
    return _last_of(unit.listing_arguments, "-fomit-frame-pointer", "-fno-omit-frame-pointer") == (
        "-fno-omit-frame-pointer"
    )


_STACK_PROTECTORS = ("-fstack-protector", "-fstack-protector-strong", "-fstack-protector-all")


def _protects_stack(unit: UnitCompile) -> bool:
    return _last_of(unit.listing_arguments, *_STACK_PROTECTORS, "-fno-stack-protector") in _STACK_PROTECTORS


def _cxx_with_exceptions_or_rtti(unit: UnitCompile) -> bool:
    args = unit.listing_arguments
    return unit.language == "c++" and (
        _last_of(args, "-fexceptions", "-fno-exceptions") != "-fno-exceptions"
        or _last_of(args, "-frtti", "-fno-rtti") != "-fno-rtti"
    )


def _asserts_on(unit: UnitCompile) -> bool:
    said = [a for a in unit.listing_arguments if a in ("-DNDEBUG", "-UNDEBUG") or a.startswith("-DNDEBUG=")]
    return not said or said[-1] == "-UNDEBUG"


@dataclass(frozen=True)
class Candidate:
    """Flags a user could add, what they remove and what that costs.

    Attributes:
        flags: The flags, added together after the line's own.
        removes: What they take out of the objects, in one line.
        caution: What the program loses with it, in one line.
        where: The lines it can apply to, in words (said when none of the log's does).
        applies: Whether it can apply to a unit's line.
    """

    flags: tuple[str, ...]
    removes: str
    caution: str
    where: str
    applies: Callable[[UnitCompile], bool] = field(repr=False)

    @property
    def name(self) -> str:
        return " ".join(self.flags)


#: The flags measured, in report order.
CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        ("-fno-asynchronous-unwind-tables",),
        "the unwind tables (.eh_frame) of functions that cannot throw",
        "no backtraces through this code from gdb/perf/backtrace()/sanitizers; code built with "
        "-fexceptions keeps its tables",
        "lines with asynchronous unwind tables on",
        _async_unwind_on,
    ),
    Candidate(
        ("-fno-asynchronous-unwind-tables", "-fno-unwind-tables"),
        "all unwind tables (.eh_frame) the code does not need for its own exceptions",
        "no .eh_frame: no backtraces from gdb/perf/backtrace(), C++ exceptions cannot pass "
        "through this code, pthread_cancel cleanups do not run",
        "lines with unwind tables on",
        _any_unwind_on,
    ),
    Candidate(
        ("-fomit-frame-pointer",),
        "the frame pointer's setup in each function, freeing its register",
        "profilers and tools that walk frame pointers (perf --call-graph=fp, eBPF stack "
        "traces, some crash reporters) lose this code's frames",
        "lines with -fno-omit-frame-pointer",
        _keeps_frame_pointer,
    ),
    Candidate(
        ("-fno-stack-protector",),
        "the stack canaries (guard load and check) of functions with arrays or address-taken locals",
        "stack buffer overflows are no longer caught at function return: a hardening lost",
        "lines with -fstack-protector, -fstack-protector-strong or -fstack-protector-all",
        _protects_stack,
    ),
    Candidate(
        ("-DNDEBUG",),
        "assert() checks and their messages (the expression, the file and, with clang, the "
        "function's whole signature as a string)",
        "a broken invariant no longer stops the program where it is found; code that relies on "
        "assert's side effects changes",
        "lines without -DNDEBUG",
        _asserts_on,
    ),
    Candidate(
        ("-fno-exceptions", "-fno-rtti"),
        "exception tables, landing pads and type_info (RTTI) data of C++ code",
        "throw, try/catch, dynamic_cast and typeid become errors; an exception from a library "
        "called here ends the program",
        "C++ lines with exceptions or RTTI on",
        _cxx_with_exceptions_or_rtti,
    ),
)


@dataclass(frozen=True)
class UnitJob:
    """A compile line of the log, ready to compile again.

    Attributes:
        name: The unit as the report names it (its source, its object where two share it).
        cwd: The folder the build compiled it in.
        clang: The clang (or clang++) to compile it with.
        unit: The line, split (:func:`~llm_compiler.driver.arguments.classify`).
        candidates: The :data:`CANDIDATES` that apply to it.
    """

    name: str
    cwd: str
    clang: Path
    unit: UnitCompile
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class UnitResult:
    """A unit compiled again: its sections at -Oz, and with each candidate's flags.

    Attributes:
        name: The unit (:attr:`UnitJob.name`).
        baseline: Its object's sections at -Oz; None when that failed (``failure`` says why).
        with_flags: Each applying candidate's name: the object's sections, or why it failed.
        failure: Why the unit could not be measured ("" when it was).
    """

    name: str
    baseline: dict[str, int] | None
    with_flags: dict[str, dict[str, int] | str] = field(default_factory=dict)
    failure: str = ""


@dataclass(frozen=True)
class FlagSaving:
    """What one candidate saved over the units it applied to.

    Attributes:
        candidate: The flags.
        before: Sections summed over the units measured, without the flags.
        after: The same units with the flags.
        units: Units measured.
        failed: Units where the flags did not compile (name: why).
    """

    candidate: Candidate
    before: dict[str, int]
    after: dict[str, int]
    units: int
    failed: tuple[tuple[str, str], ...] = ()

    @property
    def saved(self) -> int:
        """Bytes saved in all (negative: the objects grew)."""
        return sum(self.before.values()) - sum(self.after.values())


@dataclass(frozen=True)
class SavingsReport:
    """Every candidate's saving, and the lines that could not be measured.

    Attributes:
        savings: One per :data:`CANDIDATES` entry, in order.
        measured: Units compiled again.
        not_measurable: Lines not compiled again (name: why).
        skipped: Lines that are not a unit's compile (left to clang, links).
    """

    savings: tuple[FlagSaving, ...]
    measured: int
    not_measurable: tuple[tuple[str, str], ...]
    skipped: int = 0

    def text(self) -> str:
        """The report ``--flag-savings`` prints (module docstring)."""
        lines = [
            f"flag savings: {self.measured} units compiled again with clang -Oz, with and without "
            "each flag (the driver never adds them: what they remove may be needed by the target)"
        ]
        for saving in self.savings:
            name = saving.candidate.name
            if saving.units == 0 and not saving.failed:
                lines.append(f"{name}: no line to measure (it applies to {saving.candidate.where})")
                continue
            before, after = sum(saving.before.values()), sum(saving.after.values())
            share = saving.saved / before if before else 0.0
            changes = [
                f"{group} {saving.after[group] - saving.before[group]:+,}"
                for group in SECTION_GROUPS
                if saving.after[group] != saving.before[group]
            ]
            units = f"{saving.units} unit{'' if saving.units == 1 else 's'}"
            lines.append(
                f"{name}: {units}, {before:,} -> {after:,} bytes, saves {saving.saved:,} "
                f"({share:.2%}); by section: {', '.join(changes) or 'no change'}"
            )
            lines.append(f"  removes: {saving.candidate.removes}")
            lines.append(f"  caution: {saving.candidate.caution}")
            if saving.failed:
                names = ", ".join(f"{unit} ({why})" for unit, why in saving.failed)
                lines.append(f"  does not compile with it: {len(saving.failed)} ({names})")
        if self.not_measurable:
            names = "; ".join(f"{unit} ({why})" for unit, why in self.not_measurable)
            lines.append(f"not measurable: {len(self.not_measurable)} lines: {names}")
        if self.skipped:
            lines.append(f"{self.skipped} lines of the log are not a unit's compile (links, left to clang)")
        return "\n".join(lines)


def plan(records: Sequence[dict[str, Any]]) -> tuple[list[UnitJob], list[tuple[str, str]], int]:
    """The log's compile lines as jobs; those that cannot be compiled again (name: why);
    and the number of lines that are not a unit's compile."""
    units = [r for r in records if not r.get("link") and r.get("source")]
    sources = Counter(str(r["source"]) for r in units)
    jobs: list[UnitJob] = []
    failed: list[tuple[str, str]] = []
    for record in units:
        source, cwd = str(record["source"]), str(record.get("cwd", ""))
        name = source if sources[source] == 1 else f"{source} ({record.get('output', '')})"
        arguments = record.get("arguments")
        if not arguments:
            failed.append((name, "no arguments recorded: a line of an older driver"))
            continue
        try:
            command = classify([str(argument) for argument in arguments])
        except Exception as error:
            failed.append((name, f"its line cannot be read: {reason_of(error)}"))
            continue
        if not isinstance(command, UnitCompile):
            failed.append((name, "its line is not one unit's compile"))
            continue
        if command.source != source:  # a cached line, made by another compile of the same IR
            failed.append((name, f"its recorded line compiles {command.source}, not {source}"))
            continue
        if not Path(cwd).is_dir():
            failed.append((name, f"its folder is gone: {cwd}"))
            continue
        if not Path(cwd, command.source).is_file():
            failed.append((name, f"source gone: {os.path.join(cwd, command.source)}"))
            continue
        try:
            clang = _clang(str(record.get("llvm", "")), command.language)
        except Exception as error:
            failed.append((name, reason_of(error)))
            continue
        applying = tuple(candidate for candidate in CANDIDATES if candidate.applies(command))
        jobs.append(UnitJob(name, cwd, clang, command, applying))
    return jobs, failed, len(records) - len(units)


def _clang(llvm: str, language: str) -> Path:
    """The clang of the LLVM the log line names (``19.1.7 (/usr/lib/llvm-19/bin)``),
    else of :func:`~llm_compiler.toolchain.llvm.find_toolchain`."""
    tool = "clang++" if language == "c++" else "clang"
    found = re.search(r"\(([^()]*)\)\s*$", llvm)
    if found and Path(found.group(1), tool).is_file():
        return Path(found.group(1), tool)
    return find_toolchain().tool(tool)


def compile_sections(job: UnitJob, flags: Sequence[str], scratch: Path) -> dict[str, int]:
    """The sections of the unit compiled by clang at -Oz with ``flags`` added.

    Raises:
        CompileError: clang failed (its first error in the message).
        CompileTimeout: It ran past :data:`COMPILE_TIMEOUT`.
        InvalidInput: The object is not ELF.
    """
    output = scratch / "unit.o"
    output.unlink(missing_ok=True)
    result = run_command(
        [job.clang, *job.unit.listing_arguments, "-Oz", *flags, "-c", "-o", output],
        timeout=COMPILE_TIMEOUT,
        cwd=job.cwd,
        subject=job.name,
        check=False,
    )
    if result.returncode != 0:
        said = [line for line in result.stderr_text.splitlines() if "error:" in line] or [""]
        raise CompileError(f"{job.clang.name} failed with status {result.returncode}: {said[0].strip()}")
    return section_sizes(output.read_bytes())


def measure_unit(job: UnitJob) -> UnitResult:
    """Compiles ``job`` at -Oz, then with each of its candidates; never raises."""
    try:
        with tempfile.TemporaryDirectory(prefix="llm-compiler-flags-") as folder:
            scratch = Path(folder)
            try:
                baseline = compile_sections(job, (), scratch)
            except Exception as error:
                return UnitResult(job.name, None, failure=f"does not compile again: {reason_of(error)}")
            with_flags: dict[str, dict[str, int] | str] = {}
            for candidate in job.candidates:
                try:
                    with_flags[candidate.name] = compile_sections(job, candidate.flags, scratch)
                except Exception as error:
                    with_flags[candidate.name] = reason_of(error, 200)
            return UnitResult(job.name, baseline, with_flags)
    except Exception as error:  # the scratch folder itself
        return UnitResult(job.name, None, failure=reason_of(error))


def measure_flag_savings(
    records: Sequence[dict[str, Any]],
    *,
    workers: int = DEFAULT_WORKERS,
    progress: Callable[[str], None] | None = None,
) -> SavingsReport:
    """Measures every candidate flag on the log's compile lines (module docstring).

    Args:
        records: The log's lines (:func:`~llm_compiler.driver.log.read_log`).
        workers: Units compiled at once.
        progress: Called with one plain line as each unit is done.
    """
    jobs, not_measurable, skipped = plan(records)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(measure_unit, job): index for index, job in enumerate(jobs)}
        done: dict[int, UnitResult] = {}
        for future in as_completed(futures):
            result = done[futures[future]] = future.result()
            if progress is not None:
                state = result.failure or f"measured with {len(result.with_flags)} flag sets"
                progress(
                    f"flag savings: [{len(done)}/{len(jobs)}] {result.name}: {state} "
                    f"({time.monotonic() - started:.1f} s)"
                )
    results = [done[index] for index in range(len(jobs))]
    not_measurable += [(result.name, result.failure) for result in results if result.baseline is None]
    savings = []
    for candidate in CANDIDATES:
        before, after = dict.fromkeys(SECTION_GROUPS, 0), dict.fromkeys(SECTION_GROUPS, 0)
        units, failed = 0, []
        for result in results:
            if result.baseline is None or candidate.name not in result.with_flags:
                continue
            measured = result.with_flags[candidate.name]
            if isinstance(measured, str):
                failed.append((result.name, measured))
                continue
            units += 1
            for group in SECTION_GROUPS:
                before[group] += result.baseline.get(group, 0)
                after[group] += measured.get(group, 0)
        savings.append(FlagSaving(candidate, before, after, units, tuple(failed)))
    measured_units = sum(1 for result in results if result.baseline is not None)
    return SavingsReport(tuple(savings), measured_units, tuple(not_measurable), skipped)
