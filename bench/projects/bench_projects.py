"""Real projects built by their own build systems: sizes, build times and their own tests.

Run: ``.venv/bin/python bench/projects/bench_projects.py --out DIR [--projects a,b]
[--modes m1,m2] [--parallel-check] [--jobs 8] [--hog N] [--predictor SPEC]``; ``--report``
only prints the table of what ``DIR/results.jsonl`` holds. The whole benchmark, every project and mode::

    bash bench/projects/setup.sh
    .venv/bin/python bench/projects/bench_projects.py --out bench-results/projects --parallel-check

``setup.sh`` installs the build tools the projects call (autotools, libtool, readline,
lld) and meson + ninja into the virtual environment, where they are taken from; the
LLVM tools come from ``--llvm-bin`` (default ``$LLVM_BIN``, else LLVM 19's), the
sources from ``--sources`` (default ``~/.cache/llm-compiler/bench-sources``), the build
trees and caches go to ``--work`` (default ``DIR/work``).

Each project of ``projects.py`` is a Debian source package, fetched once with apt
(:func:`llm_compiler.corpus.debian.fetch_source`) into ``--sources`` and prepared there
(``autoreconf``). Each mode builds a fresh copy of it with the project's own
configure and build steps, at ``-j1`` so that times compare, then runs the project's
own tests on that build:

* ``clang-oz``: clang through a wrapper script that appends ``-Oz`` to every command
  (the last ``-O`` wins over the build's own ``-O2``);
* ``clang-oz-lto``: the same with ``-flto -fuse-ld=lld`` (and ``--undefined-version``,
  which GNU ld implies and lld does not, for version scripts naming absent symbols);
  the other modes link with clang's default linker (GNU ld);
* ``gcc-os``: GCC (``gcc``, ``g++`` for C++, from ``PATH``) through a wrapper that
  appends ``-Os``, GCC's smallest level, the reference most projects ship with;
* ``gcc-os-lto``: the same with ``-flto=1``: GCC's LTO at one job (the partitions are
  the same as with ``-flto``, the time is comparable at -j1), linked by GNU ld with
  GCC's linker plugin. Its archives are made by ``gcc-ar``/``gcc-ranlib``: GCC's LTO
  objects keep their symbols where only GCC's plugin reads them, and an archive indexed
  by LLVM's tools lists none of them, so its members are never linked. Both GCC modes
  have ``AR``, ``RANLIB`` and ``NM`` from GCC. They run by default (each costs about
  what the clang build it pairs with does);
* ``cc``: ``llm-compiler cc --cache DIR`` (``c++`` for C++) with a fresh, empty cache:
  a cold build; the driver's log goes to ``DIR/logs/<project>.cc.units.jsonl``
  (``LLM_COMPILER_CC_LOG``: the same wrapper serves the rebuild with its own log);
* ``cc-warm``: the ``cc`` build again, from a fresh copy with a fresh, empty cache, at the
  very path of the ``cc`` tree (as ``cc-j8``, below; it ends in ``cc-warm``): its
  linked outputs must be byte-identical to ``cc``'s. With ``--fresh-state`` its
  ``XDG_CACHE_HOME`` is a copy of the one the ``cc`` build left (``xdg-cc``, copied to
  ``xdg-cc-warm`` so that it stays as it was): the verdicts, pass sets and ranker are
  warm, the objects not, as in a new project on a machine that has built one before.
  Without ``--fresh-state`` it is one more cold-cache build. Without a finished ``cc``
  build, that runs first;
* ``cc-rebuild``: the ``cc`` tree cleaned by the project's own clean and built again
  with the same, now warm, cache: the rebuild of unchanged sources (its time is the
  build phase alone; the configuration is kept). Without a finished ``cc`` tree (a
  stamp file marks it) and its cache, the ``cc`` build runs first;
* ``cc-j8`` (``--parallel-check``): a fresh copy built with ``-j --jobs`` (8) and its own
  fresh cache, at the very path of the ``cc`` tree (moved aside meanwhile, then back;
  this build ends in ``cc-j8``), so that paths in debug information and run paths are
  the same and its linked outputs must be byte-identical to the ``-j1`` build's. With
  ``--hog N``, N busy-loop processes per core run beside this build (and its tests),
  so that the driver's choices are made under load: a timeout or a slow check must not
  change an object. With ``--fresh-state``, each ``cc`` mode's build runs with an empty
  ``XDG_CACHE_HOME`` of its own (``WORK/<project>/xdg-<mode>``; the rebuild reuses the
  cold build's, ``cc-warm`` a copy of it): no verdict, pass set or parsed ranker from an
  earlier build, as on a new machine after the README's set-up; and each such build has
  a new, empty ``XDG_RUNTIME_DIR`` (in the temporary folder, removed after its tests),
  so that no compile server left running by an earlier build serves it: its first
  command starts its own;
* ``cc-tuned`` (``--modes``): ``llm-compiler tune`` results in use. A fresh copy is
  configured and built with ``llm-compiler cc --oz --save-ir`` (every unit's IR), ``tune``
  runs on that IR (``--tune-budget`` lists per unit), the project's clean, and the build
  with ``--results`` (the predictor for units tune has no list for) is tested and measured.
  Its time is the final build's; the IR build's and tune's are in the record;
* ``cc-whole-program`` (``--modes``): ``llm-compiler cc --whole-program`` with a fresh
  cache (and with ``--fresh-state`` an empty ``XDG_CACHE_HOME``): the per-unit build
  whose objects carry their IR, and each link also tried with lld's LTO and a list
  chosen for the joined program; to compare with ``clang-oz-lto``.

Every other mode has ``AR``, ``RANLIB`` and ``NM`` from LLVM (archives of bitcode
work); a compiler is a wrapper script (``modes.py``: each mode's wrappers and environment).

Measured per mode: configure, build and test wall times; for each linked artifact of
the project (executables and shared libraries: ``Project.artifacts``) its Berkeley
``.text + .data``, its ``sections`` (the same bytes by kind of section:
:func:`llm_compiler.toolchain.elf.section_sizes`) and SHA-256, and the totals (bytes
and per kind of section). Each (project, mode) appends one JSON line to
``DIR/results.jsonl`` as it finishes; a pair already there is skipped unless
``--force``, so a killed run loses nothing. Every command and its output is in
``DIR/logs/<project>.<mode>.log``. The table at the end (the last record per pair)
gives the totals, the reductions against ``clang-oz`` (and ``gcc-os``), the times and
their ratios, the tests, and the geometric means over projects; a project whose ``cc`` total
exceeds ``clang-oz``'s is flagged. A second table tells where the time of each ``cc``
mode went, from its driver log (:func:`report.unit_summary`): the units compiled
(misses), those the cache served (hits), the whole-program links, and the seconds of each.
A third tells where the bytes are: per project and mode, ``.text``, ``.eh_frame``,
``.rodata``, ``.data`` and the rest. ``--report`` fills in the sections of a record
written before they were measured from its artifacts, when they are still on disk with
the same SHA-256.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import fill_sections, measure_artifacts, section_totals
from modes import (
    VENV_BIN,
    Context,
    check_gcc_lto,
    check_lld,
    environment,
    write_wrappers,
)
from projects import BENCH_DIR, MODES, PROJECTS, Project, Step
from report import report, unit_summary

from llm_compiler.corpus.debian import fetch_source
from llm_compiler.errors import CompileTimeout, LlmCompilerError, ToolchainError
from llm_compiler.files import cache_dir
from llm_compiler.toolchain.runner import run_command

DEFAULT_MODES = ("clang-oz", "clang-oz-lto", "gcc-os", "gcc-os-lto", "cc", "cc-rebuild")
TAIL = 4000


@dataclass
class Phase:
    """The outcome of a list of steps: wall time, success, the tail of the failing output."""

    seconds: float = 0.0
    ok: bool = True
    tail: str = ""


class BuildLog:
    """Appends every command, its output and its exit status to one text file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        path.write_text(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}\n")

    def write(self, text: str) -> None:
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(text)


def prepared_source(project: Project, sources: Path, log: Path) -> tuple[Path, dict[str, str]]:
    """The project's unpacked and prepared tree, fetched with apt on first use; the
    prepare steps (run once) are logged to ``log``.

    Returns:
        The tree and its provenance (package, version, ``.dsc`` digest).

    Raises:
        DebianError: apt could not fetch the package.
        CommandFailed: A prepare step failed (its output is in the error).
    """
    home = sources / project.name
    tree, info_file = home / "tree", home / "source.json"
    if not info_file.is_file():
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=home) as download:
            package = fetch_source(project.package, Path(download))
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(package.directory, tree, symlinks=True)
        info = {"package": package.name, "version": package.version, "dsc_sha256": package.dsc_sha256}
        info_file.write_text(json.dumps(info) + "\n")
    stamp = home / "prepared"
    if not stamp.is_file():
        values = {"tree": str(tree), "bench": str(BENCH_DIR)}
        env = dict(os.environ, PATH=f"{VENV_BIN}:{os.environ['PATH']}")
        phase = run_steps(project.prepare, tree, values, env, BuildLog(log), 1800)
        if not phase.ok:
            raise LlmCompilerError(f"{project.name}: a prepare step failed in {tree}:\n{phase.tail}")
        stamp.touch()
    return tree, json.loads(info_file.read_text())


def run_steps(
    steps: tuple[Step, ...],
    tree: Path,
    values: dict[str, str],
    env: dict[str, str],
    log: BuildLog,
    timeout: float,
) -> Phase:
    """Runs ``steps`` in order in ``tree``, logging each; stops at the first failure."""
    phase = Phase()
    for command in steps:
        argv = [part.format(**values) for part in command.argv]
        extra = {key: value.format(**values) for key, value in command.env}
        cwd = tree / command.cwd
        shown = " ".join(f"{key}={shlex.quote(value)}" for key, value in extra.items())
        log.write(f"\n$ cd {shlex.quote(str(cwd))} && {shown + ' ' if shown else ''}{shlex.join(argv)}\n")
        started = time.monotonic()
        try:
            # stderr joins stdout in the shell, so the log keeps their order.
            result = run_command(
                ["sh", "-c", 'exec "$@" 2>&1', "sh", *argv],
                cwd=cwd,
                env=env | extra,
                timeout=timeout,
                check=False,
            )
            output, status = result.stdout_text, result.returncode
        except (CompileTimeout, ToolchainError) as error:
            output, status = f"{error}\n", -1
        seconds = time.monotonic() - started
        phase.seconds += seconds
        log.write(output)
        log.write(f"[exit {status} after {seconds:.1f} s]\n")
        if status == 0 and command.stdout_file is not None:
            expected_file = BENCH_DIR / command.stdout_file
            if not expected_file.is_file() or output != expected_file.read_text():
                status = 1
                output += f"\n[output differs from {command.stdout_file}]\n"
                log.write(f"[output differs from {command.stdout_file}]\n")
        if status == 0 and command.forbid is not None and command.forbid in output:
            status = 1
            log.write(f"[output contains {command.forbid!r}]\n")
        if status != 0:
            phase.ok, phase.tail = False, f"$ {shlex.join(argv)}\n{output[-TAIL:]}"
            break
    return phase


def load_records(path: Path) -> list[dict[str, Any]]:
    """The records of ``results.jsonl`` (none when it does not exist)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def last_record(path: Path, project: str, mode: str) -> dict[str, Any] | None:
    """The last record of (project, mode) in ``path``."""
    matches = [r for r in load_records(path) if r["project"] == project and r["mode"] == mode]
    return matches[-1] if matches else None


def build_and_test(
    project: Project, mode: str, context: Context, source: Path, tree: Path, tools: Path
) -> dict[str, Any]:
    """Builds ``mode`` of ``project`` in ``tree`` (fresh copy, or cleaned for the
    rebuild), runs its tests, measures its artifacts; returns the record's fields."""
    log = BuildLog(context.log(project.name, mode))
    jobs = context.jobs if mode == "cc-j8" else 1
    home = context.work / project.name
    cache = home / ("cache-cc" if mode == "cc-rebuild" else f"cache-{mode}")
    unit_log = context.log(project.name, mode, "units.jsonl") if mode.startswith("cc") else None
    if unit_log is not None:
        unit_log.unlink(missing_ok=True)
    if mode != "cc-rebuild":
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(source, tree, symlinks=True)
        shutil.rmtree(cache, ignore_errors=True)
        extra: tuple[str, ...] = ("--whole-program",) if mode == "cc-whole-program" else ()
        if context.predictor is not None:
            extra += ("--predictor", context.predictor)
        write_wrappers(tools, mode, context, (*extra, "--cache", str(cache)))
        if mode == "clang-oz-lto":
            check_lld(context, tools)
    cache_home = state_home(mode, context, home) if context.fresh_state and mode.startswith("cc") else None
    # A compile server of an earlier build (or of anyone's) would serve this one with
    # what it preloaded: under --fresh-state the first command starts the build's own.
    runtime = Path(tempfile.mkdtemp(prefix="llm-compiler-bench-")) if cache_home is not None else None
    env = environment(context, tools, mode, unit_log, cache_home, runtime)
    if mode == "gcc-os-lto":
        check_gcc_lto(tools, env)
    values = {
        "cc": str(tools / "cc"),
        "cxx": str(tools / "c++"),
        "ar": env["AR"],
        "ranlib": env["RANLIB"],
        "nm": env["NM"],
        "jobs": str(jobs),
        "tree": str(tree),
        "bench": str(BENCH_DIR),
    }
    record: dict[str, Any] = {
        "jobs": jobs,
        "tree": str(tree),
        "fresh_state": context.fresh_state,
        "xdg_cache_home": None if cache_home is None else str(cache_home),
        "xdg_runtime_dir": None if runtime is None else str(runtime),
    }
    if mode == "cc-rebuild":
        clean = run_steps(project.clean, tree, values, env, log, context.timeout)
        record["clean_s"] = round(clean.seconds, 2)
        configure = Phase()
        build = run_steps(project.build, tree, values, env, log, context.timeout) if clean.ok else clean
    elif mode == "cc-tuned":
        configure, build = tuned_build(project, context, tree, tools, values, env, log, record)
    else:
        configure = run_steps(project.configure, tree, values, env, log, context.timeout)
        build = run_steps(project.build, tree, values, env, log, context.timeout) if configure.ok else Phase()
    ok = configure.ok and build.ok
    record.update(
        configure_s=round(configure.seconds, 2),
        build_s=round(build.seconds, 2),
        total_s=round(configure.seconds + build.seconds, 2),
        built=ok,
        error="" if ok else (configure.tail or build.tail),
    )
    artifacts, missing = measure_artifacts(tree, project.artifacts) if ok else ({}, list(project.artifacts))
    record.update(
        artifacts=artifacts,
        missing=missing,
        total_bytes=sum(a["bytes"] for a in artifacts.values()),
        sections=section_totals(artifacts) if ok else None,
    )
    if ok:
        tests = run_steps(project.test, tree, values, env, log, context.timeout)
        record.update(tests_passed=tests.ok, test_s=round(tests.seconds, 2), test_tail=tests.tail)
    else:
        record.update(tests_passed=None, test_s=0.0, test_tail="")
    if unit_log is not None:
        record["driver"] = unit_summary(unit_log)
    if runtime is not None:  # its server, idle now, exits on its own
        shutil.rmtree(runtime, ignore_errors=True)
    return record


def state_home(mode: str, context: Context, home: Path) -> Path:
    """The ``XDG_CACHE_HOME`` of a ``cc`` mode under ``--fresh-state``: the cold build's
    for its rebuild, a copy of it for ``cc-warm`` (the cold one stays as it was), else
    an empty folder of the mode's own (no verdict, pass set or ranker read before)."""
    if mode == "cc-rebuild":
        return home / "xdg-cc"
    cache_home = home / f"xdg-{mode}"
    shutil.rmtree(cache_home, ignore_errors=True)
    if mode == "cc-warm":
        shutil.copytree(home / "xdg-cc", cache_home, symlinks=True)
    else:
        cache_home.mkdir(parents=True)
    return cache_home


def tuned_build(
    project: Project,
    context: Context,
    tree: Path,
    tools: Path,
    values: dict[str, str],
    env: dict[str, str],
    log: BuildLog,
    record: dict[str, Any],
) -> tuple[Phase, Phase]:
    """The ``cc-tuned`` mode in ``tree``: a -Oz build that saves every unit's IR, ``tune``
    on that IR, the project's clean, and the build with the tuned lists (the predictor
    for units without one). Adds the IR build's and tune's times to ``record``.

    Returns:
        The configure phase and the final build's phase (a failed earlier step's).
    """
    home = context.work / project.name
    ir, tuned = home / "ir-cc-tuned", home / "tuned"
    for folder in (ir, tuned):
        shutil.rmtree(folder, ignore_errors=True)
    # The same script paths serve both builds: the build system keeps the compiler it configured.
    write_wrappers(tools, "cc-tuned", context, ("--oz", "--save-ir", str(ir), "--cache", "off"))
    configure = run_steps(project.configure, tree, values, env, log, context.timeout)
    if not configure.ok:
        return configure, Phase()
    first = run_steps(project.build, tree, values, env, log, context.timeout)
    record["ir_build_s"] = round(first.seconds, 2)
    if not first.ok:
        return configure, first
    tune_command = (
        str(context.llm_compiler), "tune", str(ir), "--llvm-bin", str(context.llvm_bin),
        "--budget", str(context.tune_budget), "--jobs", str(context.tune_jobs), "--out", str(tuned),
    )  # fmt: skip
    tune = run_steps((Step(tune_command),), tree, values, env, log, context.timeout)
    record["tune_s"] = round(tune.seconds, 2)
    record["tune_budget"] = context.tune_budget
    record["ir_units"] = len(list(ir.glob("*.ll")))
    if not tune.ok:
        return configure, tune
    clean = run_steps(project.clean, tree, values, env, log, context.timeout)
    if not clean.ok:
        return configure, clean
    unit_log = env.get("LLM_COMPILER_CC_LOG")
    if unit_log:  # the log tells of the tuned build alone
        Path(unit_log).unlink(missing_ok=True)
    cache = home / "cache-cc-tuned"
    write_wrappers(tools, "cc-tuned", context, ("--results", str(tuned), "--cache", str(cache)))
    return configure, run_steps(project.build, tree, values, env, log, context.timeout)


def compare_with_cc(record: dict[str, Any], context: Context, project: str) -> None:
    """Adds ``identical_to_cc`` (per artifact) and ``identical`` to a record of a build
    at the ``cc`` tree's path (rebuild, warm, -j)."""
    cold = last_record(context.results, project, "cc")
    if cold is None or not cold.get("built"):
        record["identical"] = None
        return
    same = {
        name: cold["artifacts"].get(name, {}).get("sha256") == artifact["sha256"]
        for name, artifact in record["artifacts"].items()
    }
    record["identical_to_cc"] = same
    record["identical"] = bool(same) and all(same.values()) and set(same) == set(cold["artifacts"])


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes that spin on a core until killed (a machine busy with other work)."""
    spin = [sys.executable, "-c", "while True: pass"]
    return [subprocess.Popen(spin, stdin=subprocess.DEVNULL) for _ in range(count)]


def has_cc_build(home: Path, context: Context) -> bool:
    """Whether the ``cc`` build finished in ``home`` (its tree, its cache and, under
    ``--fresh-state``, its ``XDG_CACHE_HOME``)."""
    state = (home / "xdg-cc").is_dir() or not context.fresh_state
    return (home / "cc" / ".bench-cc-built").is_file() and (home / "cache-cc").is_dir() and state


def build_at_cc_path(project: Project, mode: str, context: Context, source: Path) -> dict[str, Any]:
    """Builds ``mode`` in a fresh copy at the very path of the ``cc`` tree (moved aside
    meanwhile, then back), so that paths in debug information and run paths are those
    of ``cc``; the tree ends in ``WORK/<project>/<mode>``. Returns the record's fields."""
    home = context.work / project.name
    cc_tree, aside, final = home / "cc", home / "cc.aside", home / mode
    shutil.rmtree(final, ignore_errors=True)
    if aside.exists():  # an earlier run stopped during such a build
        shutil.rmtree(cc_tree, ignore_errors=True)
        aside.rename(cc_tree)
    if cc_tree.exists():
        cc_tree.rename(aside)
    try:
        record = build_and_test(project, mode, context, source, cc_tree, home / "tools" / mode)
    finally:
        if cc_tree.exists():
            cc_tree.rename(final)
        if aside.exists():
            aside.rename(cc_tree)
    record["tree"] = str(final)
    return record


def run_mode(project: Project, mode: str, context: Context) -> dict[str, Any]:
    """Builds, tests and measures one (project, mode); appends its record; returns it."""
    source, provenance = prepared_source(project, context.sources, context.log(project.name, "prepare"))
    home = context.work / project.name
    cc_tree = home / "cc"
    started = time.time()
    if mode in ("cc-warm", "cc-rebuild") and not has_cc_build(home, context):
        print(f"[{project.name}] {mode} needs the cc build: building it first", flush=True)
        run_mode(project, "cc", context)
    if mode == "cc-rebuild":
        record = build_and_test(project, mode, context, source, cc_tree, home / "tools" / "cc")
    elif mode == "cc-warm":
        record = build_at_cc_path(project, mode, context, source)
    elif mode == "cc-j8":
        hogs = busy_loops(context.hog * (os.cpu_count() or 1))
        try:
            record = build_at_cc_path(project, mode, context, source)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        record["busy_loops"] = len(hogs)
    else:
        record = build_and_test(project, mode, context, source, home / mode, home / "tools" / mode)
        if mode == "cc" and record["built"]:
            (cc_tree / ".bench-cc-built").touch()
    if mode in ("cc-warm", "cc-rebuild", "cc-j8") and record["built"]:
        compare_with_cc(record, context, project.name)
    record = {
        "project": project.name,
        "mode": mode,
        "system": project.system,
        **provenance,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        **record,
    }
    context.results.parent.mkdir(parents=True, exist_ok=True)
    with context.results.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(record) + "\n")
    tests = {True: "tests passed", False: "TESTS FAILED", None: "no tests (build failed)"}[
        record["tests_passed"]
    ]
    print(
        f"[{project.name}] {mode}: {'built' if record['built'] else 'BUILD FAILED'}, configure "
        f"{record['configure_s']:.1f} s, build {record['build_s']:.1f} s, {tests}, "
        f"{record['total_bytes']} bytes in {len(record['artifacts'])} artifacts"
        + (f", missing {record['missing']}" if record["missing"] else "")
        + (f", identical to cc: {record['identical']}" if "identical" in record else ""),
        flush=True,
    )
    return record


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="results.jsonl and logs/ go here")
    parser.add_argument("--work", type=Path, help="build trees and caches (default OUT/work)")
    parser.add_argument("--sources", type=Path, default=cache_dir("bench-sources"), help="unpacked sources")
    parser.add_argument(
        "--projects", default=",".join(PROJECTS), help="comma-separated, of: " + ", ".join(PROJECTS)
    )
    parser.add_argument(
        "--modes", help=f"comma-separated, of: {', '.join(MODES)} (default: {','.join(DEFAULT_MODES)})"
    )
    parser.add_argument("--parallel-check", action="store_true", help="add cc-j8 to the modes")
    parser.add_argument("--jobs", type=int, default=8, help="make/ninja -j of cc-j8 (default 8)")
    parser.add_argument(
        "--hog", type=int, default=0, help="busy-loop processes per core beside the cc-j8 build (default 0)"
    )
    parser.add_argument(
        "--fresh-state",
        action="store_true",
        help="each cc mode's build with an empty XDG_CACHE_HOME of its own (no verdicts kept)",
    )
    parser.add_argument(
        "--tune-budget", type=int, default=50, help="lists tune proposes per unit in cc-tuned (default 50)"
    )
    parser.add_argument(
        "--tune-jobs", type=int, default=os.cpu_count() or 1, help="tune's --jobs (default: the cores)"
    )
    parser.add_argument(
        "--predictor", help="llm-compiler cc's --predictor in the cc modes (default: its default)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild pairs already in results.jsonl")
    parser.add_argument("--report", action="store_true", help="only print the table of results.jsonl")
    parser.add_argument(
        "--also",
        type=Path,
        action="append",
        default=[],
        help="with --report: the results of another --out folder too (repeatable; later runs win)",
    )
    parser.add_argument(
        "--llvm-bin", type=Path, default=Path(os.environ.get("LLVM_BIN", "/usr/lib/llvm-19/bin"))
    )
    parser.add_argument("--llm-compiler", type=Path, default=VENV_BIN / "llm-compiler")
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds per command (default 7200)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_arguments(argv)
    out = args.out.resolve()
    context = Context(
        out=out,
        work=(args.work or out / "work").resolve(),
        sources=args.sources.resolve(),
        llvm_bin=args.llvm_bin.resolve(),
        llm_compiler=args.llm_compiler.absolute(),
        timeout=args.timeout,
        jobs=args.jobs,
        tune_budget=args.tune_budget,
        tune_jobs=args.tune_jobs,
        predictor=args.predictor,
        hog=args.hog,
        fresh_state=args.fresh_state,
    )
    if args.report:
        records = load_records(context.results)
        for folder in args.also:
            records += load_records(folder / "results.jsonl")
        fill_sections(records)
        print(report(records))
        return 0
    unknown = [name for name in args.projects.split(",") if name not in PROJECTS]
    modes = args.modes.split(",") if args.modes else list(DEFAULT_MODES)
    if args.parallel_check and "cc-j8" not in modes:
        modes.append("cc-j8")
    unknown += [mode for mode in modes if mode not in MODES]
    if unknown:
        print(f"unknown project or mode: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for tool in ("meson", "ninja"):
        if shutil.which(tool, path=f"{VENV_BIN}:{os.environ.get('PATH', '')}") is None:
            print(f"warning: {tool} not found (serd needs it): .venv/bin/pip install {tool}", file=sys.stderr)
    modes = [mode for mode in MODES if mode in modes]  # dependencies first: cc before its rebuild
    started = time.monotonic()
    for name in args.projects.split(","):
        for mode in modes:
            if not args.force and last_record(context.results, name, mode) is not None:
                print(f"[{name}] {mode}: already in {context.results}, skipped", flush=True)
                continue
            try:
                run_mode(PROJECTS[name], mode, context)
            except (LlmCompilerError, OSError) as error:
                print(f"[{name}] {mode}: could not run: {error}", file=sys.stderr, flush=True)
    print(f"\n{time.monotonic() - started:.0f} s\n")
    records = load_records(context.results)
    fill_sections(records)
    print(report(records))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
