"""Where corpus units come from: Debian packages, a user's build, files, Csmith.

Each ``add_*`` function turns one kind of source into :class:`SourceFile` values and
hands them to a :class:`CorpusBuilder`. Splits are decided per package (or project),
never per file, so no package has units in two splits: the default suite fixes the
split of each of its packages; anything else gets :func:`split_for` of its name,
unless the user names a split.

:data:`DEFAULT_SUITE` is the ``--suite default`` corpus: 28 Debian source packages of
compression, codecs, crypto, parsers, interpreters, math and image code.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.corpus.builder import AddReport, CorpusBuilder, SourceFile, split_for
from llm_compiler.corpus.compile_capture import capture_compile_commands
from llm_compiler.corpus.debian import DebianError, ensure_source_entries, fetch_source, read_licence
from llm_compiler.corpus.store import Failure, Provenance
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.toolchain.frontend import (
    C_SUFFIXES,
    CXX_SUFFIXES,
    SOURCE_SUFFIXES,
    CompileCommand,
    FrontendOptions,
    flags_from_compile_command,
)
from llm_compiler.toolchain.runner import run_command

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SuitePackage:
    """A package of a named suite, with its kind of code and its fixed split."""

    name: str
    category: str
    split: str


DEFAULT_SUITE: tuple[SuitePackage, ...] = (
    SuitePackage("bzip2", "compression", "test"),
    SuitePackage("zlib", "compression", "train"),
    SuitePackage("xz-utils", "compression", "train"),
    SuitePackage("lz4", "compression", "validation"),
    SuitePackage("zstd", "compression", "train"),
    SuitePackage("brotli", "compression", "train"),
    SuitePackage("lua5.4", "interpreter", "train"),
    SuitePackage("jq", "interpreter", "train"),
    SuitePackage("sqlite3", "database", "train"),
    SuitePackage("libpng1.6", "image", "train"),
    SuitePackage("giflib", "image", "test"),
    SuitePackage("libjpeg-turbo", "image", "train"),
    SuitePackage("tiff", "image", "train"),
    SuitePackage("lame", "audio codec", "train"),
    SuitePackage("libmad", "audio codec", "validation"),
    SuitePackage("flac", "audio codec", "train"),
    SuitePackage("opus", "audio codec", "train"),
    SuitePackage("speex", "audio codec", "test"),
    SuitePackage("libgsm", "audio codec", "validation"),
    SuitePackage("libogg", "container", "train"),
    SuitePackage("expat", "parser", "train"),
    SuitePackage("libyaml", "parser", "validation"),
    SuitePackage("pcre2", "parser", "train"),
    SuitePackage("cjson", "parser", "test"),
    SuitePackage("json-c", "parser", "train"),
    SuitePackage("gmp", "math", "train"),
    SuitePackage("nettle", "crypto", "test"),
    SuitePackage("libsodium", "crypto", "train"),
)

SUITES = {"default": DEFAULT_SUITE}


def suite_split(name: str) -> str:
    """The split of a package: fixed for suite packages, else :func:`split_for`."""
    for package in DEFAULT_SUITE:
        if package.name == name:
            return package.split
    return split_for(name)


ProgressCallback = Callable[[str, int, int], None]


def _is_source(path: Path) -> bool:
    return path.suffix in C_SUFFIXES | CXX_SUFFIXES


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _from_commands(
    commands: Sequence[CompileCommand], provenance: Provenance, root: Path, tree: Path | None
) -> list[SourceFile]:
    files = []
    for command in commands:
        if not _is_source(command.source):
            continue
        relative = _relative(command.source, root)
        debian = provenance.origin == "debian"
        files.append(
            SourceFile(
                path=command.source,
                options=flags_from_compile_command(command),
                provenance=Provenance(
                    origin=provenance.origin,
                    package=provenance.package,
                    version=provenance.version,
                    file=relative,
                    licence=read_licence(root, relative) if debian else provenance.licence,
                    command=command.arguments,
                ),
                tree=tree,
            )
        )
    return files


def add_debian(
    builder: CorpusBuilder,
    names: Iterable[str],
    *,
    work_dir: Path | None = None,
    split: str | None = None,
    install_build_deps: bool = False,
    force: bool = False,
    jobs: int = 2,
    progress: ProgressCallback | None = None,
) -> dict[str, AddReport | str]:
    """Fetches, builds and adds Debian source packages; a failing package is skipped.

    Args:
        builder: Adds the units.
        names: Source (or binary) package names.
        work_dir: Where sources are unpacked (a temporary folder, removed, by default).
        split: Force one split for all (default: per package, see :func:`suite_split`).
        install_build_deps: Run ``apt-get build-dep`` first (root), so builds find their
            libraries; without it, a build that cannot configure falls back to files
            compiled on their own.
        force: Rebuild packages the corpus already holds.
        jobs: Parallel build jobs.
        progress: Called with (package, files done, files in all).

    Returns:
        For each name, its report, or the reason it was skipped.
    """
    ensure_source_entries()
    store = builder.store
    results: dict[str, AddReport | str] = {}
    with tempfile.TemporaryDirectory(prefix="llm-compiler-debian-") as scratch:
        base = Path(work_dir) if work_dir else Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        for name in names:
            pinned = store.pinned_packages().get(name, {})
            if pinned.get("status") == "done" and not force:
                results[name] = "already in the corpus (use --force to rebuild)"
                continue
            # a rebuild, a build that was interrupted, or one that failed before, starts
            # from a clean slate
            store.remove_package("debian", name)
            folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=base))
            try:
                results[name] = _add_package(
                    builder, name, folder, pinned.get("version"), split, install_build_deps, jobs, progress
                )
            except LlmCompilerError as error:
                reason = str(error).strip()
                store.record_failure(Failure("debian", name, "", "package", reason[:1000]))
                results[name] = f"skipped: {reason}"
                logger.warning("%s skipped: %s", name, reason)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return results


def _add_package(
    builder: CorpusBuilder,
    name: str,
    folder: Path,
    version: str | None,
    split: str | None,
    install_build_deps: bool,
    jobs: int,
    progress: ProgressCallback | None,
) -> AddReport:
    package = fetch_source(name, folder, version)
    store = builder.store
    chosen_split = split or suite_split(name)
    record = {"version": package.version, "dsc_sha256": package.dsc_sha256, "split": chosen_split}
    store.pin_package(name, {**record, "status": "building"})
    if install_build_deps:
        try:
            run_command(
                [
                    "apt-get",
                    "build-dep",
                    "-y",
                    "-q",
                    "--no-install-recommends",
                    f"{package.name}={package.version}",
                ],
                timeout=1800,
            )
        except LlmCompilerError as error:
            logger.warning("%s: build dependencies not installed: %s", name, error)
    captured = capture_compile_commands(package.directory, builder.compiler.toolchain, jobs=jobs)
    provenance = Provenance("debian", package.name, package.version)
    files = _from_commands(captured.commands, provenance, package.directory, package.directory)
    if not files:
        raise DebianError(f"{package.name} {package.version} has no C or C++ file")
    done = 0

    def on_file(_: SourceFile) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, len(files))

    report = builder.add(files, chosen_split, on_file=on_file)
    store.pin_package(
        name, {**record, "status": "done", "build": captured.method, "note": captured.note[:500]}
    )
    return report


def add_compile_commands(
    builder: CorpusBuilder,
    database: Path,
    *,
    project: str | None = None,
    split: str | None = None,
    licence: str = "unknown",
    progress: ProgressCallback | None = None,
) -> AddReport:
    """Adds every C/C++ file of a ``compile_commands.json``, with its own flags."""
    import json

    try:
        entries = json.loads(Path(database).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InvalidInput(f"{database}: not a readable compile_commands.json ({error}).") from error
    if not isinstance(entries, list):
        raise InvalidInput(f"{database} must hold a JSON list of compile commands.")
    commands = [CompileCommand.from_entry(entry) for entry in entries if isinstance(entry, dict)]
    root = Path(database).resolve().parent
    name = project or root.name
    files = _from_commands(commands, Provenance("compile-commands", name, licence=licence), root, None)
    return _add(builder, files, split or suite_split(name), name, progress)


def add_files(
    builder: CorpusBuilder,
    paths: Iterable[Path],
    options: FrontendOptions,
    *,
    project: str | None = None,
    split: str | None = None,
    licence: str = "unknown",
    progress: ProgressCallback | None = None,
) -> AddReport:
    """Adds C/C++/IR files (folders are searched) compiled with ``options``."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES))
        elif path.is_file():
            found.append(path)
        else:
            raise InvalidInput(f"{path}: no such file or folder.")
    if not found:
        raise InvalidInput("no C, C++ or LLVM-IR file to add.")
    name = project or found[0].resolve().parent.name
    command = tuple(options.to_flags())
    files = [
        SourceFile(path, options, Provenance("files", name, file=str(path), licence=licence, command=command))
        for path in found
    ]
    return _add(builder, files, split or suite_split(name), name, progress)


def add_csmith(
    builder: CorpusBuilder,
    count: int,
    seed: int,
    *,
    cache_dir: Path,
    split: str | None = None,
    progress: ProgressCallback | None = None,
) -> AddReport:
    """Adds ``count`` Csmith programs (seeds ``seed``...), generated once and cached.

    Each program is its own "package" (``csmith-<seed>``), so splits are by program.
    """
    from llm_compiler.validation.csmith import csmith_suite

    suite = csmith_suite(builder.compiler.toolchain, count, seed, cache_dir)
    report = AddReport()
    for program in suite.programs:
        options = FrontendOptions(extra_flags=program.flags)
        provenance = Provenance(
            "csmith",
            program.name,
            file=f"{program.name}.c",
            licence="generated by Csmith",
            command=tuple(options.to_flags()),
        )
        file = SourceFile(cache_dir / "csmith" / f"{program.name}.c", options, provenance)
        report.merge(_add(builder, [file], split or split_for(program.name), program.name, progress))
    return report


def _add(
    builder: CorpusBuilder, files: list[SourceFile], split: str, name: str, progress: ProgressCallback | None
) -> AddReport:
    done = 0

    def on_file(_: SourceFile) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, len(files))

    return builder.add(files, split, on_file=on_file)
