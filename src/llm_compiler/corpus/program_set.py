"""The one reader of "a set of programs", used by every command that takes programs.

A program set is named by one or more targets:

* a C/C++ source or an IR file (``.ll``/``.bc``);
* a folder, searched recursively for those, in sorted order;
* a ``compile_commands.json``, each entry compiled with the flags of its own build;
* a corpus: its folder (one holding ``manifest.jsonl``), its manifest file, or
  ``corpus:PATH?split=test&kind=function&limit=N`` to choose units of it (``split``
  takes ``train``, ``validation``, ``test`` or several separated by commas; ``kind``
  takes ``unit`` (translation units) or ``function`` (modules split per function)).

Every program carries its split (the corpus's, which splits by package; for other
files, a stable split of the folder it lies in, see
:func:`~llm_compiler.corpus.builder.split_for`) and its provenance. Targets are
checked when the set is made; programs are read one at a time when it is iterated,
so a set of any size is handled in constant memory, and a program is compiled only by
:meth:`ProgramSource.load`, in whatever process handles it. :meth:`ProgramSource.gcc_source`
says how GCC compiles the same program (a source file with its flags translated, or
the GCC-preprocessed source a corpus keeps), or why it cannot.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.corpus.builder import split_for
from llm_compiler.corpus.store import SPLITS, Unit
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.frontend import (
    SOURCE_SUFFIXES,
    CompileCommand,
    FrontendOptions,
    flags_from_compile_command,
    language_of,
)
from llm_compiler.toolchain.gcc import GccSource, flags_of_options, target_of

CORPUS_SCHEME = "corpus:"
KINDS = ("unit", "function")
_PROVENANCE_KEYS = ("origin", "package", "version", "file", "function", "licence")


@dataclass(frozen=True)
class ProgramSource:
    """One program of a set: where to read it, its split and where it came from.

    Attributes:
        name: What tables and records call it: the path for files, the package and
            file (and function) for corpus units.
        path: The file to read or compile.
        split: ``"train"``, ``"validation"`` or ``"test"``.
        provenance: Origin, package, version, file, function and licence (always
            these keys, ``None`` where unknown).
        options: Front-end options for a source file.
        unit_id: The corpus unit's id, for corpus units.
        gcc: For a corpus unit, its GCC-preprocessed source and flags, where the corpus
            keeps them.
        gcc_missing: For a corpus unit without them, why, and how to keep them.
    """

    name: str
    path: Path
    split: str
    provenance: dict[str, Any] = field(default_factory=dict)
    options: FrontendOptions | None = None
    unit_id: str | None = None
    gcc: GccSource | None = None
    gcc_missing: str | None = None

    def key(self) -> str:
        """What identifies the program in resume state: its unit id, else its path."""
        return self.unit_id or str(self.path)

    def load(self, compiler: Compiler) -> Program:
        """Reads or compiles the program into unoptimized IR.

        A corpus unit's IR is read back through LLVM, as a ``.ll`` file is: the text
        LLVM prints again can differ from the stored one (use-list order shows in the
        ``; preds`` comments), and program ids, sizes and a tuning run's labels are
        those of the text LLVM prints. It is read from stdin, so no local path enters
        the ModuleID line of a prompt.

        Raises:
            InvalidInput: The file cannot be read or compiled.
        """
        if self.unit_id is not None:
            try:
                ir = self.path.read_text()
            except OSError as error:
                raise InvalidInput(f"{self.path}: cannot read the unit's IR ({error}).") from error
            return replace(compiler.load_ir(ir, self.name), source=str(self.path))
        return compiler.load(self.path, self.options)

    def gcc_source(self) -> GccSource:
        """How GCC compiles this program: a C/C++ file with its front-end flags translated,
        or a corpus unit's kept GCC-preprocessed source.

        Raises:
            InvalidInput: An IR file, or a corpus unit without a GCC source (the message
                says why and how to keep one).
        """
        if self.unit_id is not None:
            if self.gcc is None:
                raise InvalidInput(self.gcc_missing or f"{self.name}: the corpus keeps no GCC source for it.")
            return self.gcc
        language = language_of(self.path)
        if language == "ir":
            raise InvalidInput(f"{self.path} is LLVM-IR: there is no C or C++ source for GCC to compile.")
        options = self.options or FrontendOptions()
        target = options.target or target_of(options.extra_flags)
        return GccSource(self.path, tuple(flags_of_options(options)), target, language, options.cwd)


def provenance_fields(**fields: str | None) -> dict[str, str | None]:
    """The provenance of a program, always with the same keys (one schema per dataset).

    Raises:
        ValueError: An unknown key.
    """
    unknown = set(fields) - set(_PROVENANCE_KEYS)
    if unknown:
        raise ValueError(f"unknown provenance fields {sorted(unknown)}")
    return {key: fields.get(key) for key in _PROVENANCE_KEYS}


@dataclass(frozen=True)
class _CorpusQuery:
    manifest: Path
    splits: tuple[str, ...] = ()
    kind: str | None = None
    limit: int | None = None


def _corpus_query(target: str) -> _CorpusQuery:
    text = target.removeprefix(CORPUS_SCHEME)
    location, _, query = text.partition("?")
    path = Path(location).expanduser()
    manifest = path / "manifest.jsonl" if path.is_dir() else path
    if not manifest.is_file():
        raise InvalidInput(f"{target}: no corpus there (a folder with manifest.jsonl, or the manifest).")
    try:
        options = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as error:
        raise InvalidInput(f"{target}: the query after '?' is not key=value&... ({error}).") from error
    unknown = set(options) - {"split", "kind", "limit"}
    if unknown:
        raise InvalidInput(f"{target}: unknown corpus option {sorted(unknown)[0]!r}; use split, kind, limit.")
    splits = tuple(s for value in options.get("split", []) for s in value.split(",") if s)
    if set(splits) - set(SPLITS):
        raise InvalidInput(f"{target}: split must be one of {', '.join(SPLITS)}, not {','.join(splits)}.")
    kind = options.get("kind", [None])[-1]
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"{target}: kind must be unit or function, not {kind!r}.")
    limit = options.get("limit", [None])[-1]
    if limit is not None and (not limit.isdigit() or int(limit) < 1):
        raise InvalidInput(f"{target}: limit must be a whole number of at least 1, not {limit!r}.")
    return _CorpusQuery(manifest, splits, kind, int(limit) if limit else None)


def _from_manifest(query: _CorpusQuery) -> Iterator[ProgramSource]:
    root = query.manifest.parent
    with query.manifest.open() as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                unit = Unit.from_json(json.loads(line))
            except (json.JSONDecodeError, KeyError) as error:
                if not line.endswith("\n"):
                    return  # the last line of a manifest still being written
                raise InvalidInput(
                    f"{query.manifest}:{number}: not a corpus manifest record ({error})."
                ) from error
            if (query.splits and unit.split not in query.splits) or (query.kind and unit.kind != query.kind):
                continue
            origin = unit.provenance
            provenance = provenance_fields(
                origin=origin.origin,
                package=origin.package,
                version=origin.version,
                file=origin.file,
                function=origin.function,
                licence=origin.licence,
            )
            name = f"{origin.package}/{origin.file}" + (f":{origin.function}" if origin.function else "")
            gcc = unit.gcc_source(root)
            missing = None if gcc is not None else _gcc_missing(name, unit, root)
            yield ProgramSource(
                name,
                root / unit.ir_path,
                unit.split,
                provenance,
                unit_id=unit.id,
                gcc=gcc,
                gcc_missing=missing,
            )


def _gcc_missing(name: str, unit: Unit, root: Path) -> str:
    """Why a corpus unit has no GCC source, and how to keep one."""
    if unit.kind == "function":
        return (
            f"{name}: a function split from a translation unit has no source of its own for GCC to "
            "compile; evaluate the translation units instead (corpus:...?kind=unit)."
        )
    origin = unit.provenance
    if origin.origin == "debian":
        how = f"llm-compiler corpus add debian --force {origin.package} --corpus {root}"
    else:
        what = {"files": f"files {origin.file}", "csmith": "csmith --count N"}.get(
            origin.origin, "compile-commands PATH/compile_commands.json"
        )
        how = (
            f"llm-compiler corpus add {what} --corpus NEW_DIR (a new folder: a corpus keeps the units "
            "it holds as they are)"
        )
    return (
        f"{name}: the corpus keeps no GCC source for this unit (it was added before corpora kept "
        "them, or without GCC for its target installed). Rebuild the corpus with GCC installed "
        f"(gcc, or gcc-arm-none-eabi / gcc-aarch64-linux-gnu for cross targets): {how}."
    )


def _compile_commands(path: Path) -> list[tuple[Path, FrontendOptions]]:
    try:
        entries = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise InvalidInput(f"{path}: not valid JSON ({error}).") from error
    if not isinstance(entries, list):
        raise InvalidInput(f"{path}: must hold a JSON list of compile commands.")
    files = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise InvalidInput(f"{path}: every compile command must be a JSON object.")
        command = CompileCommand.from_entry(entry)
        if command.source.suffix in SOURCE_SUFFIXES:
            files.append((command.source, flags_from_compile_command(command)))
    return files


def _files(target: Path, options: FrontendOptions) -> list[tuple[Path, FrontendOptions]]:
    if target.is_dir():
        found = sorted(p for p in target.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
        if not found:
            raise InvalidInput(
                f"{target}: the folder holds no C, C++ or LLVM-IR file "
                f"({', '.join(sorted(SOURCE_SUFFIXES))})."
            )
        return [(path, options) for path in found]
    if target.name == "compile_commands.json" and target.is_file():
        return _compile_commands(target)
    if target.is_file():
        return [(target, options)]
    raise InvalidInput(f"{target}: no such file or folder.")


def _is_corpus(target: str) -> bool:
    path = Path(target)
    return (
        target.startswith(CORPUS_SCHEME)
        or (path.is_dir() and (path / "manifest.jsonl").is_file())
        or (path.is_file() and path.name.endswith("manifest.jsonl"))
    )


class ProgramSet:
    """The programs named by command-line targets (see the module docstring).

    Args:
        targets: What the user named.
        options: Front-end options for plain source files (compile commands carry
            their own).
        splits: Keep only programs of these splits (empty: all).
        limit: Keep at most this many programs (of the chosen splits).

    Raises:
        InvalidInput: A target does not exist, holds no program, or is a malformed
            corpus target; ``limit`` below 1.
    """

    def __init__(
        self,
        targets: Iterable[str | Path],
        options: FrontendOptions | None = None,
        *,
        splits: Sequence[str] = (),
        limit: int | None = None,
    ) -> None:
        self.options = options or FrontendOptions()
        self.splits = tuple(splits)
        if limit is not None and limit < 1:
            raise InvalidInput(f"--limit must be at least 1, not {limit}.")
        self.limit = limit
        self._parts: list[_CorpusQuery | list[tuple[Path, FrontendOptions]]] = []
        for target in map(str, targets):
            self._parts.append(
                _corpus_query(target) if _is_corpus(target) else _files(Path(target), self.options)
            )
        if not self._parts:
            raise InvalidInput("No programs named: give files, folders, a compile_commands.json or a corpus.")

    def _all(self) -> Iterator[ProgramSource]:
        for part in self._parts:
            if isinstance(part, _CorpusQuery):
                units = _from_manifest(part)
                yield from itertools.islice(units, part.limit) if part.limit else units
                continue
            for path, options in part:
                group = path.resolve().parent.name
                provenance = provenance_fields(origin="files", package=group, file=str(path))
                yield ProgramSource(str(path), path, split_for(group), provenance, options)

    def __iter__(self) -> Iterator[ProgramSource]:
        chosen = (source for source in self._all() if not self.splits or source.split in self.splits)
        return itertools.islice(chosen, self.limit)
