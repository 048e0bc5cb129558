"""``llm-compiler cc`` and ``llm-compiler c++``: the compiler driver for a project's own build.

The arguments are a compiler's, so they do not go through argparse: only the driver's
own options, before the first other argument, are read here (each also settable by an
environment variable, the command line winning); the rest goes to
:class:`~llm_compiler.driver.cc.Driver` as it is. Under CMake's compiler launcher the
first argument after them is the real compiler (``/usr/bin/cc``); it is dropped, and its
name says whether the build compiles C or C++.

The choosers a unit is offered come from :func:`default_choosers`, in order; the
driver ends the chain with ``-Oz``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.driver.arguments import split_launcher
from llm_compiler.driver.cc import Driver, DriverOptions
from llm_compiler.driver.choose import Chooser, FirstOf, OzOnly, TunedResults
from llm_compiler.driver.log import log_summary
from llm_compiler.driver.predicted import Predicted
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.selection.registry import check_spec

USAGE = """\
usage: llm-compiler cc  [DRIVER OPTIONS] [REAL COMPILER] COMPILER ARGUMENTS...
       llm-compiler c++ [DRIVER OPTIONS] [REAL COMPILER] COMPILER ARGUMENTS...

A drop-in C/C++ compiler that builds each translation unit with its own pass list:
a list tuned and validated by `llm-compiler tune` for exactly that unit's IR, else the
built-in predictor's (its top 10 lists measured, the smallest validated one kept), else
-Oz. An object is never larger than -Oz's (opt's default<Oz> or clang -Oz, whichever is
smaller), and a failure of the driver's own steps falls back to clang -Oz. Links,
preprocessing, assembly and queries run as clang (clang++ for c++) with the arguments
unchanged.

driver options (only before the first compiler argument; each also an environment variable):
  --results DIR   LLM_COMPILER_RESULTS  use the lists of `llm-compiler tune --out DIR` (best.jsonl)
  --save-ir DIR   LLM_COMPILER_SAVE_IR  write each unit's unoptimized IR to DIR/<stem>-<id>.ll
  --log FILE      LLM_COMPILER_CC_LOG   append one JSON line per unit (list, origin, sizes, fallback)
  --predictor SPEC LLM_COMPILER_PREDICTOR  builtin (default), builtin:k=N, builtin:PATH, or none
  --oz            LLM_COMPILER_OZ=1     never optimize beyond -Oz (a baseline build)
  --objective NAME LLM_COMPILER_OBJECTIVE  binary-size (default, .text + .data) or text-size (.text)
  --summary LOG   (alone) print a build's figures from its log: geomean and total bytes vs -Oz
The build's -O levels are ignored: the driver decides the optimization. Give absolute
paths when the build changes directory (recursive make). A unit's tuned list is found
by the hash of its IR; with -g the IR names the build directory, so build in the same
directory or add -ffile-prefix-map=$PWD=. to CFLAGS.

examples:
  make CC="llm-compiler cc"                                   # predicted lists, validated
  make CC="llm-compiler cc --save-ir $PWD/ir --log $PWD/cc.jsonl"
  llm-compiler tune ir/ --budget 100 --out tuned/
  make clean && make CC="llm-compiler cc --results $PWD/tuned --log $PWD/cc.jsonl"
  llm-compiler cc --summary cc.jsonl                          # what the build saved, in total
  cmake -DCMAKE_C_COMPILER_LAUNCHER="llm-compiler;cc" -DCMAKE_CXX_COMPILER_LAUNCHER="llm-compiler;c++" ..
"""

#: The driver's options and the environment variables that also set them.
ENVIRONMENT = {
    "--results": "LLM_COMPILER_RESULTS",
    "--save-ir": "LLM_COMPILER_SAVE_IR",
    "--log": "LLM_COMPILER_CC_LOG",
    "--predictor": "LLM_COMPILER_PREDICTOR",
    "--oz": "LLM_COMPILER_OZ",
    "--objective": "LLM_COMPILER_OBJECTIVE",
}


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
    given: dict[str, str] = {}
    index = 0
    while index < len(arguments):
        name, equals, value = arguments[index].partition("=")
        if name not in ENVIRONMENT or (name == "--oz" and equals):
            break
        index += 1
        if name == "--oz":
            given[name] = "1"
        elif equals:
            given[name] = value
        elif index < len(arguments):
            given[name] = arguments[index]
            index += 1
        else:
            raise LlmCompilerError(f"llm-compiler cc: {name} needs a value. See `llm-compiler cc --help`.")
    for name, variable in ENVIRONMENT.items():
        if name not in given and environ.get(variable):
            given[name] = environ[variable]

    def path(name: str) -> Path | None:
        return Path(given[name]) if given.get(name) else None

    options = DriverOptions(
        results=path("--results"),
        save_ir=path("--save-ir"),
        log=path("--log"),
        oz=given.get("--oz", "0") not in ("", "0"),
        predictor=given.get("--predictor") or "builtin",
        objective=Objective.parse(given.get("--objective") or DEFAULT_OBJECTIVE),
    )
    return options, list(arguments[index:])


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
        choosers.append(TunedResults(options.results))
    if options.predictor != "none":
        check_spec(options.predictor)  # a malformed or unknown spec fails here, not unit by unit
        choosers.append(Predicted(compiler, options.predictor, objective=options.objective))
    return choosers


def main(command: str, arguments: Sequence[str]) -> int:
    """Runs ``llm-compiler cc|c++ ARGUMENTS...``; returns the exit status."""
    if list(arguments) == ["--help"]:
        sys.stdout.write(USAGE)
        return 0
    if arguments and arguments[0] == "--summary":
        try:
            if len(arguments) != 2:
                raise InvalidInput(
                    "--summary takes one argument, the log: llm-compiler cc --summary cc.jsonl"
                )
            sys.stdout.write(log_summary(Path(arguments[1])) + "\n")
            return 0
        except LlmCompilerError as error:
            sys.stderr.write(f"llm-compiler {command}: error: {error}\n")
            return 2
    logging.basicConfig(level=logging.WARNING, format="llm-compiler cc: %(message)s")
    try:
        options, rest = parse_driver_options(arguments)
        launched, rest = split_launcher(rest)
        language = launched or ("c++" if command == "c++" else "c")
        # opt and llc as processes: one unit per process, the library would not pay off.
        compiler = Compiler(engine="subprocess", workers=1)
        driver = Driver(
            language,
            FirstOf(*default_choosers(options, compiler)),
            save_ir=options.save_ir,
            log=options.log,
            compiler=compiler,
            objective=options.objective,
        )
        return driver.run(rest)
    except LlmCompilerError as error:
        sys.stderr.write(f"llm-compiler {command}: error: {error}\n")
        return 2
