"""``llm-compiler cc`` and ``llm-compiler c++``: the compiler driver for a project's own build.

The arguments are a compiler's, so they do not go through argparse: only the driver's
own options, before the first other argument, are read here (each also settable by an
environment variable, the command line winning); the rest goes to
:class:`~llm_compiler.driver.cc.Driver` as it is. Under CMake's compiler launcher the
first argument after them is the real compiler (``/usr/bin/cc``); it is dropped, and its
name says whether the build compiles C or C++.

The choosers a unit is offered come from :func:`default_choosers`, in order; the
driver ends the chain with ``-Oz``. They, and the optimizer behind them, are made on a
cache miss only: a unit found in the cache (:mod:`llm_compiler.driver.cache`) costs its
front end and little more, so this module imports nothing heavy at its top.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.driver import direct
from llm_compiler.driver.arguments import split_launcher
from llm_compiler.driver.cache import DEFAULT_MAX_BYTES, ObjectCache, parse_size
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import BEST_FILE, Chooser, FirstOf, OzOnly, TunedResults
from llm_compiler.driver.records import DriverOptions
from llm_compiler.errors import InvalidInput, LlmCompilerError

if TYPE_CHECKING:
    from llm_compiler.core.compiler import Compiler

USAGE = """\
usage: llm-compiler cc  [DRIVER OPTIONS] [REAL COMPILER] COMPILER ARGUMENTS...
       llm-compiler c++ [DRIVER OPTIONS] [REAL COMPILER] COMPILER ARGUMENTS...

A drop-in C/C++ compiler that builds each translation unit with its own pass list:
a list tuned and validated by `llm-compiler tune` for exactly that unit's IR, else the
built-in predictor's (its top 10 lists measured, the smallest validated one kept), else
-Oz. An object is never larger than -Oz's (opt's default<Oz> or clang -Oz, whichever is
smaller), and a failure of the driver's own steps falls back to clang -Oz. Links,
preprocessing, assembly, -flto and what else the driver does not split run as clang
(clang++ for c++), at -Oz in place of the build's -O levels (queries unchanged). A unit
prints and fails as clang -Oz would, backend diagnostics included; @FILE response files
are expanded as clang expands them, several sources in one -c compile unit by unit, and
-mllvm options reach opt and llc too.

driver options (only before the first compiler argument; each also an environment variable):
  --results DIR   LLM_COMPILER_RESULTS  use the lists of `llm-compiler tune --out DIR` (best.jsonl)
  --save-ir DIR   LLM_COMPILER_SAVE_IR  write each unit's unoptimized IR to DIR/<stem>-<id>.ll
  --log FILE      LLM_COMPILER_CC_LOG   append one JSON line per unit (list, origin, sizes, fallback)
  --predictor SPEC LLM_COMPILER_PREDICTOR  builtin (default), builtin:k=N, builtin:PATH, or none;
                  builtin:stop=X measures more lists (0.002) or fewer (0.008) than the default
  --oz            LLM_COMPILER_OZ=1     never optimize beyond -Oz (a baseline build)
  --objective NAME LLM_COMPILER_OBJECTIVE  binary-size (default, .text + .data) or text-size (.text)
  --cache DIR     LLM_COMPILER_CACHE    objects by (unit IR, flags, LLVM, choosers); `off` for none
                                        (default ~/.cache/llm-compiler/cc)
  --cache-size N  LLM_COMPILER_CACHE_SIZE  bound of the cache, e.g. 500M, 2G (default 1G)
  --whole-program LLM_COMPILER_WHOLE_PROGRAM=1  objects also carry their unit's IR; a link of
                  them also tries lld's LTO with default<Oz> and with a list chosen and
                  validated for the joined program, and keeps the smallest (needs ld.lld)
  --jobs N        LLM_COMPILER_CC_JOBS  candidates measured at once (default: the cores, at
                  most 4; 1 when MAKEFLAGS shows a parallel make: -jN with N > 1, -j, or a
                  jobserver, since make already runs a unit per job)
  --no-direct     LLM_COMPILER_NO_DIRECT=1  look objects up by the unit's IR only: run the
                  front end on every hit (by default an unchanged command whose source
                  and headers hold the same bytes is answered without it)
  --no-server     LLM_COMPILER_NO_SERVER=1  run each command in its own process from the
                  start (by default a compile server that has the driver loaded runs it:
                  the first command starts one, which exits after 120 s without work;
                  LLM_COMPILER_SERVER_IDLE sets that time)
  --summary LOG [--flag-savings]  (alone) print a build's figures from its log: geomean and
                  total bytes vs -Oz, and the bytes of the kept objects (and linked files) by
                  section. With --flag-savings, each compile line is compiled again with clang
                  -Oz, with and without each flag a user could add to drop what the target may
                  not need (unwind tables, frame pointers, stack protector, C++ exceptions and
                  RTTI), and the bytes each saves are shown with what it costs; the driver
                  never adds them itself
  --stats         (alone, or after --cache DIR) the cache's entries, hits, misses and their time
A unit compiled again with the same IR, flags, LLVM, tuned results and ranker is written
from the cache; when the command, its source and headers are unchanged too, without even
its front end. The cache is shared safely by make -j; a
cache that cannot be written is only read, or not used, and the build goes on.
The build's -O levels are ignored everywhere: the driver decides the optimization. Give absolute
paths when the build changes directory (recursive make). A unit's tuned list is found
by the hash of its IR; with -g the IR names the build directory, so build in the same
directory or add -ffile-prefix-map=$PWD=. to CFLAGS.

examples:
  make CC="llm-compiler cc"                                   # predicted lists, validated
  make CC="llm-compiler cc --save-ir $PWD/ir --log $PWD/cc.jsonl"
  llm-compiler tune ir/ --budget 100 --out tuned/
  make clean && make CC="llm-compiler cc --results $PWD/tuned --log $PWD/cc.jsonl"
  llm-compiler cc --summary cc.jsonl                          # what the build saved, in total
  llm-compiler cc --summary cc.jsonl --flag-savings           # what optional flags would save
  cmake -DCMAKE_C_COMPILER_LAUNCHER="llm-compiler;cc" -DCMAKE_CXX_COMPILER_LAUNCHER="llm-compiler;c++" ..
"""

#: The driver's options and the environment variables that also set them.
ENVIRONMENT = direct.ENVIRONMENT
#: Driver options that take no value (an environment value other than "" or "0" sets them).
FLAGS = direct.FLAGS


def parse_driver_options(
    arguments: Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[DriverOptions, list[str]]:
    """Reads the leading driver options; returns them and the compiler's arguments.

    Precedence: an option on the command line, then its environment variable.

    Raises:
        LlmCompilerError: A path option without its value.

    Example:
        >>> options, rest = parse_driver_options(["--log", "cc.jsonl", "-c", "a.c"], {})
        >>> options.log, rest
        (PosixPath('cc.jsonl'), ['-c', 'a.c'])
    """
    environ = os.environ if environ is None else environ
    try:
        given, index = direct.scan_options(arguments, environ)
    except ValueError as error:
        raise LlmCompilerError(
            f"llm-compiler cc: {error} needs a value. See `llm-compiler cc --help`."
        ) from None

    def path(name: str) -> Path | None:
        return Path(given[name]) if given.get(name) else None

    options = DriverOptions(
        results=path("--results"),
        save_ir=path("--save-ir"),
        log=path("--log"),
        oz=direct.is_set(given, "--oz"),
        predictor=given.get("--predictor") or "builtin",
        objective=Objective.parse(given.get("--objective") or DEFAULT_OBJECTIVE),
        cache=None
        if given.get("--cache", "") == "off"
        else path("--cache") or direct.default_cache_dir(environ),
        cache_size=parse_size(given["--cache-size"]) if given.get("--cache-size") else DEFAULT_MAX_BYTES,
        whole_program=direct.is_set(given, "--whole-program"),
        direct=not direct.is_set(given, "--no-direct"),
        jobs=_jobs(given.get("--jobs"), environ.get("MAKEFLAGS", "")),
    )
    return options, list(arguments[index:])


def _jobs(text: str | None, makeflags: str = "") -> int:
    """The candidates measured at once: ``--jobs`` (or ``LLM_COMPILER_CC_JOBS``) when
    given; else 1 under a parallel make (:func:`make_runs_in_parallel` of ``MAKEFLAGS``),
    whose jobs already fill the cores; else the cores, at most 4.

    Raises:
        InvalidInput: ``text`` is not a number of 1 or more.
    """
    if not text:
        return 1 if make_runs_in_parallel(makeflags) else min(4, os.cpu_count() or 1)
    if not text.isdigit() or int(text) < 1:
        raise InvalidInput(f"--jobs takes a number of candidates measured at once (1 or more), not {text!r}.")
    return int(text)


def make_runs_in_parallel(makeflags: str) -> bool:
    """Whether ``MAKEFLAGS`` (as make passes it to its recipes) shows a parallel build:
    ``-jN`` (or ``--jobs=N``, BSD make's ``-j N``) with N > 1, ``-j`` without a number
    (no limit), or a jobserver (``--jobserver-auth=``, ``--jobserver-fds=`` of GNU make
    before 4.2, BSD make's ``-J``). Variable assignments after ``--`` are not read.

    Example:
        >>> make_runs_in_parallel(" -j8 --jobserver-auth=3,4"), make_runs_in_parallel("s -j1")
        (True, False)
    """
    words = makeflags.split()
    for index, word in enumerate(words):
        if word == "--":
            break
        if word.startswith(("--jobserver-auth=", "--jobserver-fds=")) or word == "-J":
            return True
        if word.startswith("-j"):
            number = word[2:]
        elif word == "--jobs" or word.startswith("--jobs="):
            number = word[7:]
        else:
            continue
        number = number or (words[index + 1] if index + 1 < len(words) else "")
        if not number.isdigit() or int(number) != 1:
            return True
    return False


def default_choosers(options: DriverOptions, compiler: Compiler) -> list[Chooser]:
    """The choosers asked for each unit, first to last (the driver ends with -Oz): the
    tuned results, then the predictor (made on first use).

    Raises:
        InvalidInput: ``--results`` names a folder without tune results, or
            ``--predictor`` is not a predictor spec.
    """
    if options.oz:
        return [OzOnly()]
    choosers: list[Chooser] = []
    if options.results is not None:
        choosers.append(TunedResults(options.results, options.objective))
    if options.predictor != "none":
        from llm_compiler.driver.predicted import Predicted
        from llm_compiler.selection.registry import check_spec

        check_spec(options.predictor)  # a malformed or unknown spec fails here, not unit by unit
        choosers.append(
            Predicted(compiler, options.predictor, objective=options.objective, jobs=options.jobs)
        )
    return choosers


def chooser_identity(options: DriverOptions) -> str:
    """What the choosers of ``options`` know, as text for the cache key: the options, the
    bytes of the tuned results, of the shipped rankers and of a ranker file named in the
    predictor spec. A new tune run or another ranker makes new keys.

    Raises:
        InvalidInput: ``--results`` names a folder without tune results (found here,
            before any compile, though the choosers are made on a cache miss only).
    """
    if not options.oz and options.results is not None and not (options.results / BEST_FILE).is_file():
        raise InvalidInput(
            f"{options.results / BEST_FILE}: no tuned results there. --results names the "
            "--out folder of `llm-compiler tune` (it holds best.jsonl)."
        )
    return direct.choosers_text(oz=options.oz, predictor=options.predictor, results=options.results)


def _summary(arguments: Sequence[str]) -> int:
    """``--summary LOG [--flag-savings]``: prints the log's summary, then, when asked, the
    flag savings measured on its compile lines (progress on stderr).

    Raises:
        InvalidInput: Not one log, or an option other than ``--flag-savings``.
    """
    savings = "--flag-savings" in arguments
    logs = [argument for argument in arguments if argument != "--flag-savings"]
    if len(logs) != 1 or logs[0].startswith("-"):
        raise InvalidInput(
            "--summary takes one argument, the log, and optionally --flag-savings: "
            "llm-compiler cc --summary cc.jsonl [--flag-savings]"
        )
    from llm_compiler.driver.log import log_summary, read_log

    sys.stdout.write(log_summary(Path(logs[0])) + "\n")
    sys.stdout.flush()
    if savings:
        from llm_compiler.driver.flag_savings import measure_flag_savings

        def progress(line: str) -> None:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

        report = measure_flag_savings(read_log(Path(logs[0])), progress=progress)
        sys.stdout.write(report.text() + "\n")
    return 0


def main(command: str, arguments: Sequence[str]) -> int:
    """Runs ``llm-compiler cc|c++ ARGUMENTS...``; returns the exit status."""
    if list(arguments) == ["--help"]:
        sys.stdout.write(USAGE)
        return 0
    if arguments and arguments[0] == "--summary":
        try:
            return _summary(arguments[1:])
        except LlmCompilerError as error:
            sys.stderr.write(f"llm-compiler {command}: error: {error}\n")
            return 2
    logging.basicConfig(level=logging.WARNING, format="llm-compiler cc: %(message)s")
    try:
        options, rest = parse_driver_options(arguments)
        if rest == ["--stats"]:
            if options.cache is None:
                raise InvalidInput("--stats reads the cache, and --cache is off.")
            cache = ObjectCache(options.cache, max_bytes=options.cache_size)
            sys.stdout.write(cache.stats().text() + "\n")
            return 0
        source_key = None
        if options.direct:  # the key of direct hits: the command as given, before the launcher is dropped
            given, _ = direct.scan_options(arguments, os.environ)
            source_key = direct.source_key(command, given, rest, os.getcwd(), os.environ)
        launched, rest = split_launcher(rest)
        language = launched or ("c++" if command == "c++" else "c")
        driver = Driver(
            language,
            lambda compiler: FirstOf(*default_choosers(options, compiler)),
            save_ir=options.save_ir,
            log=options.log,
            objective=options.objective,
            cache=None if options.cache is None else ObjectCache(options.cache, max_bytes=options.cache_size),
            choosers_identity=chooser_identity(options),
            whole_program=options.whole_program,
            source_key=source_key,
            # The predictor answers by a unit's IR alone; tuned results are found by the
            # unit's own IR, so a build that uses them chooses unit by unit.
            share_choices=options.results is None
            and not options.oz
            and options.predictor != "none"
            and not options.whole_program,
            frames=not options.oz,
        )
        return driver.run(rest)
    except LlmCompilerError as error:
        sys.stderr.write(f"llm-compiler {command}: error: {error}\n")
        return 2
