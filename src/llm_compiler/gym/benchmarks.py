"""Benchmarks and datasets of the pass-ordering environment, each named by a URI.

A **benchmark** is one program an episode optimizes. Its URI says where it comes from,
and the same URI gives the same program on any machine with the same inputs:

* ``file:PATH`` (or a bare path): a C/C++ source or an IR file (``.ll``/``.bc``);
* ``corpus:ROOT?unit=ID``: one unit of a corpus built by ``llm-compiler corpus``;
* ``builtin:NAME``: a program of the built-in validation suite, with its flags;
* ``csmith:SEED``: the Csmith program of that seed (generated once and cached; seeds
  whose program does not compile or run are refused, as the csmith suite discards
  them);
* ``llvm-stress:SEED`` or ``llvm-stress:SEED?size=N``: the random IR function
  ``llvm-stress -seed=SEED -size=N`` writes (default size 100).

A **dataset** is a named, ordered collection of benchmark URIs:

* ``builtin``: the C and C++ programs of the built-in validation suite that ship with
  the package (:mod:`llm_compiler.validation.suites`), each a real program with a ``main``;
* ``csmith`` and ``llvm-stress``: generators, seeds 0, 1, 2, ... (unbounded);
* any program-set target (:mod:`llm_compiler.corpus.program_set`): a folder, a
  ``compile_commands.json``, a corpus with ``?split=train`` and the rest, named by the
  target itself.

Nothing is downloaded: generators run the locally installed ``csmith`` and
``llvm-stress``, and every other benchmark is a file the user has.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.corpus.program_set import CORPUS_SCHEME, ProgramSet, ProgramSource
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.files import atomic_write_text, cache_dir
from llm_compiler.toolchain.frontend import FrontendOptions
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.csmith import INSTALL_HINT, csmith_include_dir, csmith_suite
from llm_compiler.validation.suites import builtin_suite

#: The size ``llvm-stress`` is given unless a URI says otherwise.
LLVM_STRESS_SIZE = 100

BUILTIN_SCHEME = "builtin:"

_SEED = re.compile(r"(csmith|llvm-stress):(\d+)(?:\?(.*))?")


@dataclass(frozen=True)
class Benchmark:
    """One program of the environment, with the URI that names it.

    Attributes:
        uri: The benchmark's URI (module docstring).
        program: The unoptimized program.
        split: ``train``, ``validation`` or ``test`` where the source says (corpus units,
            files by their folder), else ``None``.
    """

    uri: str
    program: Program
    split: str | None = None


def load_benchmark(uri: str, compiler: Compiler) -> Benchmark:
    """The benchmark ``uri`` names, compiled to unoptimized IR by ``compiler``.

    Raises:
        InvalidInput: The URI is malformed or names nothing (no such file, unit or seed).
        LlmCompilerError: A generator is not installed, or the front end failed.
    """
    uri = str(uri)
    seeded = _SEED.fullmatch(uri)
    if seeded:
        kind, seed, query = seeded.group(1), int(seeded.group(2)), seeded.group(3) or ""
        if kind == "csmith":
            if query:
                raise InvalidInput(f"{uri}: csmith benchmarks take no options.")
            return Benchmark(uri, _csmith_program(seed, compiler))
        return Benchmark(uri, _llvm_stress_program(seed, _stress_size(uri, query), compiler))
    if uri.startswith(("csmith:", "llvm-stress:")):
        raise InvalidInput(f"{uri}: a generator benchmark is csmith:SEED or llvm-stress:SEED[?size=N].")
    if uri.startswith(CORPUS_SCHEME):
        return _corpus_benchmark(uri, compiler)
    if uri.startswith(BUILTIN_SCHEME):
        return Benchmark(uri, _builtin_program(uri, compiler))
    path = Path(uri.removeprefix("file:")).expanduser()
    if not path.is_file():
        raise InvalidInput(f"{uri}: no such file; a benchmark is a source or IR file, or a URI (see --help).")
    source = next(iter(ProgramSet([path])))
    return Benchmark(f"file:{path}", source.load(compiler), source.split)


def _corpus_benchmark(uri: str, compiler: Compiler) -> Benchmark:
    location, _, query = uri.removeprefix(CORPUS_SCHEME).partition("?")
    options = parse_qs(query)
    units = options.get("unit", [])
    if len(units) != 1 or set(options) != {"unit"}:
        raise InvalidInput(f"{uri}: a corpus benchmark is corpus:ROOT?unit=ID (one unit).")
    for source in ProgramSet([f"{CORPUS_SCHEME}{location}"]):
        if source.unit_id == units[0]:
            return Benchmark(uri, source.load(compiler), source.split)
    raise InvalidInput(f"{uri}: the corpus at {location} has no unit {units[0]!r}.")


def _stress_size(uri: str, query: str) -> int:
    if not query:
        return LLVM_STRESS_SIZE
    options = parse_qs(query)
    sizes = options.get("size", [])
    if set(options) != {"size"} or len(sizes) != 1 or not sizes[0].isdigit() or int(sizes[0]) < 1:
        raise InvalidInput(f"{uri}: llvm-stress takes ?size=N, N a whole number of at least 1.")
    return int(sizes[0])


def _csmith_program(seed: int, compiler: Compiler) -> Program:
    suite = csmith_suite(compiler.toolchain, 1, seed, cache_dir("csmith"))
    include = csmith_include_dir()
    if not suite.programs or include is None:
        raise InvalidInput(
            f"csmith:{seed}: Csmith's program of this seed does not compile or run cleanly, "
            "so it is not a benchmark; take another seed."
        )
    path = cache_dir("csmith", "csmith") / f"csmith-{seed}.c"
    options = FrontendOptions(include_dirs=(str(include),), extra_flags=("-w",))
    return compiler.load(path, options)


def _llvm_stress_program(seed: int, size: int, compiler: Compiler) -> Program:
    tool = compiler.toolchain.bin_dir / "llvm-stress"
    if not tool.is_file():
        raise LlmCompilerError(
            f"llvm-stress is not in {compiler.toolchain.bin_dir}; Debian ships it in llvm-"
            f"{compiler.toolchain.major}-tools (apt install llvm-{compiler.toolchain.major}-tools)."
        )
    with tempfile.TemporaryDirectory(prefix="llm-compiler-stress-") as scratch:
        output = Path(scratch) / "stress.ll"
        run_command([tool, f"-seed={seed}", f"-size={size}", "-o", output], timeout=60)
        return compiler.load_ir(output.read_text(), name=f"llvm-stress-{seed}")


@dataclass(frozen=True)
class Dataset:
    """A named, ordered collection of benchmark URIs.

    Attributes:
        name: ``builtin``, ``csmith``, ``llvm-stress`` or the program-set target.
        description: One line on what it holds.
        size: How many benchmarks it has (None: unbounded, a generator).
    """

    name: str
    description: str
    size: int | None

    def benchmark_uris(self) -> Iterator[str]:
        """Its benchmark URIs, in a stable order (a generator's never end)."""
        if self.name in ("csmith", "llvm-stress"):
            return (f"{self.name}:{seed}" for seed in itertools.count())
        if self.name == "builtin":
            return iter(_builtin_uris())
        return iter(_program_set_uris(self.name))

    def __iter__(self) -> Iterator[str]:
        return self.benchmark_uris()


def _builtin_uris() -> tuple[str, ...]:
    return tuple(f"{BUILTIN_SCHEME}{test.name}" for test in builtin_suite().programs)


def _builtin_program(uri: str, compiler: Compiler) -> Program:
    name = uri.removeprefix(BUILTIN_SCHEME)
    found = {test.name: test for test in builtin_suite().programs}
    if name not in found:
        raise InvalidInput(f"{uri}: the built-in suite has no program {name!r}.")
    test = found[name]
    folder = cache_dir("gym", "builtin")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{test.name}.{'c' if test.language == 'c' else 'cpp'}"
    if not path.is_file() or path.read_text() != test.source:
        atomic_write_text(path, test.source)
    return compiler.load(path, FrontendOptions(extra_flags=test.flags))


def _program_set_uris(target: str) -> tuple[str, ...]:
    return tuple(_uri_of(source, target) for source in ProgramSet([target]))


def _uri_of(source: ProgramSource, target: str) -> str:
    if source.unit_id is not None:
        root = target.removeprefix(CORPUS_SCHEME).partition("?")[0]
        root = str(Path(root).parent) if root.endswith("manifest.jsonl") else root
        return f"{CORPUS_SCHEME}{root}?unit={source.unit_id}"
    return f"file:{source.path}"


def datasets(extra: Sequence[str] = ()) -> dict[str, Dataset]:
    """The datasets an environment offers: the built-in and generator ones, and one per
    program-set target in ``extra``.

    Raises:
        InvalidInput: A target in ``extra`` names no programs.
    """
    found = {
        "builtin": Dataset(
            "builtin", "C and C++ programs of the built-in validation suite", len(_builtin_uris())
        ),
        "csmith": Dataset("csmith", f"Csmith random C programs by seed ({_installed('csmith')})", None),
        "llvm-stress": Dataset("llvm-stress", "llvm-stress random IR functions by seed", None),
    }
    for target in extra:
        found[target] = Dataset(target, "programs of a program-set target", len(_program_set_uris(target)))
    return found


def _installed(tool: str) -> str:
    return "installed" if shutil.which(tool) and csmith_include_dir() else f"not installed: {INSTALL_HINT}"
