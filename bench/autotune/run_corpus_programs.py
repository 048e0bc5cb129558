"""Links and runs the corpus's programs with the pass lists a tuning run reported.

Run after ``bench/autotune/bench_autotune.py``::

    .venv/bin/python bench/autotune/run_corpus_programs.py --corpus /work/corpus \\
        --results /work/bench-autotune/*-*

A corpus unit that defines ``main`` is a program: it is linked with the units of its
package that define no ``main`` and resolve its references, transitively (read from
the objects' symbol tables; a symbol several units define comes from the unit nearest
the program's folder), with ``-lm`` and the system libraries the packages need. Two builds are
compared: every unit at ``default<Oz>`` (the reference), and every unit with the list
the run reported for it (``default<Oz>`` for units the run did not tune). Both run,
sandboxed, on the same inputs: a text on standard input, a GIF file made by the
package's own ``gifwedge`` (for GIF tools), bzip2's own compressed text (``bzip2
-d``), and raw PCM files for speex's test encoders. A run is compared on its exit
status, standard output and every file it wrote. A program whose reference does not
link, or whose reference runs differ (it writes times or random numbers, or reads
memory it never wrote: the reference runs again with fresh heap memory filled with a
pattern, and a ``default<O2>`` build runs too; a difference is confirmed by five
more reference runs), is skipped with the reason. Exits 1 when any reported list
changed a program's behaviour.
"""

from __future__ import annotations

import argparse
import bz2
import json
import math
import re
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import CommandFailed
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.linkage import defined_symbols, undefined_symbols
from llm_compiler.validation.sandbox import Limits, run_sandboxed

TEXT = b"".join(
    f"line {i}: the quick brown fox jumps over the lazy dog {i * i % 97}\n".encode() for i in range(800)
)
PCM = b"".join(struct.pack("<h", int(8000 * math.sin(i / 7.0) * math.cos(i / 301.0))) for i in range(16000))
#: After the corpus objects: what the corpus holds no C for (nettle's assembly, libogg, gmp).
SYSTEM_LIBRARIES = ("-lm", "-lhogweed", "-lnettle", "-logg", "-lgmp")
_MAIN = re.compile(r"^define [^@\n]*@main\(", re.MULTILINE)


@dataclass(frozen=True)
class Scenario:
    name: str
    argv: tuple[str, ...]
    stdin: bytes = b""
    files: tuple[tuple[str, bytes], ...] = ()


def scenarios(file: str, gif: bytes | None) -> list[Scenario]:
    base = Path(file).name
    found = [Scenario("text on stdin", (), TEXT)]
    if gif is not None and base.startswith("gif"):
        found.append(Scenario("a GIF on stdin", (), gif))
    if base == "bzip2.c":
        found.append(Scenario("bzip2 -d", ("-d",), bz2.compress(TEXT)))
        found.append(Scenario("bzip2 -c file", ("-c", "in.txt"), b"", (("in.txt", TEXT),)))
    if base.startswith("testenc"):
        found.append(Scenario("encode PCM", ("in.raw", "bits.out", "out.raw"), b"", (("in.raw", PCM),)))
    return found


def load_manifest(corpus: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (corpus / "manifest.jsonl").read_text().splitlines() if line.strip()]


def run_program(
    executable: Path, scenario: Scenario, perturb: bool = False
) -> tuple[int, bytes, dict[str, bytes]]:
    """Exit status, stdout and the files written; ``perturb`` fills fresh heap memory
    with a pattern (glibc's ``MALLOC_PERTURB_``), to catch reads of uninitialized memory."""
    with tempfile.TemporaryDirectory(prefix="corpus-run-") as scratch:
        directory = Path(scratch)
        for name, data in scenario.files:
            (directory / name).write_bytes(data)
        local = directory / executable.name
        local.write_bytes(executable.read_bytes())
        local.chmod(0o755)
        result = run_sandboxed(
            local,
            directory,
            Limits(timeout=20, cpu_seconds=20, file_bytes=16 * 1024**2),
            arguments=scenario.argv,
            stdin=scenario.stdin,
            environment={"MALLOC_PERTURB_": "85"} if perturb else None,
        )
        written = {
            path.name: path.read_bytes()
            for path in directory.iterdir()
            if path.is_file() and path.name != local.name and path.name not in dict(scenario.files)
        }
        return result.returncode, result.stdout, written


class Builder:
    """Objects of corpus units with a pipeline, and executables linked from them."""

    def __init__(self, compiler: Compiler, corpus: Path, work: Path) -> None:
        self.compiler, self.corpus, self.work = compiler, corpus, work
        self.objects: dict[tuple[str, str], Path] = {}
        self._symbols: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._executables = 0

    def object(self, unit: dict[str, object], pipeline: str) -> Path:
        key = (str(unit["id"]), pipeline)
        if key not in self.objects:
            program = self.compiler.load(self.corpus / str(unit["ir_path"]))
            path = self.work / f"{unit['id']}-{len(self.objects)}.o"
            self.compiler.compile_to(program, self.compiler.passes(pipeline), path)
            self.objects[key] = path
        return self.objects[key]

    def symbols(self, unit: dict[str, object]) -> tuple[frozenset[str], frozenset[str]]:
        """What the unit's -Oz object defines and what it needs (read once)."""
        key = str(unit["id"])
        if key not in self._symbols:
            blob = self.object(unit, "default<Oz>").read_bytes()
            self._symbols[key] = (defined_symbols(blob), undefined_symbols(blob))
        return self._symbols[key]

    def link(self, units: list[dict[str, object]], pipelines: list[str], name: str) -> Path | str:
        """The executable, or why it does not link."""
        objects = [str(self.object(unit, pipeline)) for unit, pipeline in zip(units, pipelines, strict=True)]
        self._executables += 1
        executable = self.work / f"program-{self._executables}"
        clang = str(self.compiler.toolchain.tool("clang"))
        link = [clang, "-no-pie", "-fuse-ld=lld", *objects, *SYSTEM_LIBRARIES, "-o", str(executable)]
        try:
            run_command(link, timeout=120, subject=name)
        except CommandFailed as error:
            return f"does not link: {error.stderr.strip().splitlines()[0][:160]}"
        return executable


def closure(
    builder: Builder, main: dict[str, object], library: list[dict[str, object]]
) -> list[dict[str, object]]:
    """The main unit and the library units that resolve its references, transitively.

    A symbol several units define is taken from the unit whose folder shares the most
    with the main unit's (a tool's own helpers before another tool's copy).
    """
    defines = {str(u["id"]): builder.symbols(u)[0] for u in library}

    def closeness(unit: dict[str, object]) -> int:
        mine, theirs = Path(str(main["file"])).parent.parts, Path(str(unit["file"])).parent.parts
        return next(
            (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
            min(len(mine), len(theirs)),
        )

    chosen = [main]
    defined, wanted = (set(symbols) for symbols in builder.symbols(main))
    while wanted - defined:
        symbol = sorted(wanted - defined)[0]
        providers = [u for u in library if symbol in defines[str(u["id"])] and u not in chosen]
        if not providers:
            defined.add(symbol)  # from a system library, or left for the linker to report
            continue
        unit = max(providers, key=lambda u: (closeness(u), -len(str(u["file"]))))
        chosen.append(unit)
        defined |= defines[str(unit["id"])]
        wanted |= builder.symbols(unit)[1]
    return chosen


def check_package(
    builder: Builder, units: list[dict[str, object]], reported: dict[str, str], notes: list[str]
) -> tuple[int, int, int]:
    """Runs every program of one package both ways; returns (compared, skipped, changed)."""
    oz = "default<Oz>"
    package = str(units[0]["package"])
    is_main = {str(u["id"]): bool(_MAIN.search((builder.corpus / str(u["ir_path"])).read_text()))
               for u in units}  # fmt: skip
    library = [u for u in units if not is_main[str(u["id"])]]
    mains = [u for u in units if is_main[str(u["id"])]]
    mains.sort(key=lambda u: Path(str(u["file"])).name != "gifwedge.c")  # its GIF feeds the others
    compared = skipped = changed = 0
    gif = None
    for unit in mains:
        name = f"{package}/{unit['file']}"
        members = closure(builder, unit, library)
        reference = builder.link(members, [oz] * len(members), name)
        conservative = builder.link(members, ["default<O2>"] * len(members), name)
        lists = [reported.get(f"{package}/{u['file']}", oz) for u in members]
        candidate = builder.link(members, lists, name)
        if not isinstance(reference, Path) or not isinstance(conservative, Path):
            skipped += 1
            notes.append(f"skipped {name}: the -Oz build {reference}")
            continue
        if not isinstance(candidate, Path):
            changed += 1
            notes.append(f"CHANGED {name}: the reported build {candidate}")
            continue
        for scenario in scenarios(str(unit["file"]), gif):
            expected = run_program(reference, scenario)
            runs = [run_program(reference, scenario, perturb=True), run_program(conservative, scenario)]
            if any(run != expected for run in runs):
                notes.append(f"skipped {name} ({scenario.name}): its output depends on the build or the heap")
                continue
            if Path(str(unit["file"])).name == "gifwedge.c" and expected[0] == 0:
                gif = expected[1]
            compared += 1
            if run_program(candidate, scenario) != expected:
                # A difference counts only if the reference never varies on its own.
                if any(run_program(reference, scenario) != expected for _ in range(5)):
                    compared -= 1
                    notes.append(f"skipped {name} ({scenario.name}): the -Oz build's own runs differ")
                    continue
                changed += 1
                notes.append(f"CHANGED {name} ({scenario.name})")
    return compared, skipped, changed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="folders with best.jsonl")
    args = parser.parse_args(argv)
    manifest = [u for u in load_manifest(args.corpus) if u["kind"] == "unit"]
    changed_in_all = 0
    with Compiler(workers=2) as compiler, tempfile.TemporaryDirectory(prefix="corpus-link-") as scratch:
        builder = Builder(compiler, args.corpus, Path(scratch))
        for results in args.results:
            reported = {}
            for line in (results / "best.jsonl").read_text().splitlines():
                record = json.loads(line)
                if record.get("status") == "ok":
                    reported[record["program"]] = record["best_pipeline"]
            totals = [0, 0, 0]
            notes: list[str] = []
            for package in sorted({name.split("/", 1)[0] for name in reported}):
                units = [u for u in manifest if u["package"] == package]
                for index, value in enumerate(check_package(builder, units, reported, notes)):
                    totals[index] += value
            changed_in_all += totals[2]
            print(
                f"{results.name}: {totals[0]} program runs compared, {totals[1]} programs skipped, "
                f"{totals[2]} changed",
                flush=True,
            )
            for note in notes:
                print(f"  {note}")
    return 1 if changed_in_all else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
