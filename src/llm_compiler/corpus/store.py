"""The corpus on disk: content-addressed IR, a manifest of units, and what failed.

A corpus folder holds::

    ir/<ab>/<id>.ll        unoptimized IR, named by its content hash (Program.id)
    gcc/<ab>/<id>.i.gz     the unit's source preprocessed by GCC (.ii.gz for C++), where
                           GCC for its target was installed when it was added
    manifest.jsonl         one :class:`Unit` per line, appended as units are added
    failures.jsonl         every unit or package that could not be added, and why
    packages.json          pinned source packages (name, version, .dsc digest)

A unit's id is the hash of its IR text, so the same IR added twice (two packages
bundling one file, a rebuild) is stored once: the first one added keeps its split,
and no hash can appear in two splits. Units are appended as they are made, so an
interrupted build keeps its work and a rerun skips what is already there.
A unit with a GCC source records it in ``extra["gcc"]``: the file (relative to the
folder), GCC's code-generation flags, the target and the language
(:meth:`Unit.gcc_source`), so ``gcc-os`` can compile the same unit later.
:meth:`CorpusStore.write_parquet` writes the manifest as Parquet (needs pyarrow).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_bytes, atomic_write_text, write_parquet
from llm_compiler.toolchain.gcc import PREPROCESSED_SUFFIX, GccSource

SPLITS = ("train", "validation", "test")


def default_corpus_dir() -> Path:
    """``$LLM_COMPILER_CORPUS``, else ``$XDG_DATA_HOME/llm-compiler/corpus``
    (``~/.local/share/llm-compiler/corpus``)."""
    if os.environ.get("LLM_COMPILER_CORPUS"):
        return Path(os.environ["LLM_COMPILER_CORPUS"])
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "llm-compiler" / "corpus"


@dataclass(frozen=True)
class Provenance:
    """Where a unit came from.

    Attributes:
        origin: ``"debian"``, ``"compile-commands"``, ``"files"`` or ``"csmith"``.
        package: The source package or project (a Csmith program's seed for csmith).
        version: The package version (Debian's, e.g. ``1:1.2.13.dfsg-1``), or ``""``.
        file: The source file, relative to the package root where there is one.
        licence: The licence of the file (from ``debian/copyright``), or ``"unknown"``.
        command: The compile command of the package's own build, or the front-end
            flags used when the file was compiled on its own.
        function: For a per-function unit, the function's name.
        parent: For a per-function unit, the id of the translation unit it was split from.
    """

    origin: str
    package: str
    version: str = ""
    file: str = ""
    licence: str = "unknown"
    command: tuple[str, ...] = ()
    function: str | None = None
    parent: str | None = None


@dataclass(frozen=True)
class Unit:
    """One program of the corpus: a translation unit or a function split from one.

    Attributes:
        id: Hash of the IR text (:attr:`Program.id`).
        split: ``"train"``, ``"validation"`` or ``"test"`` (by package).
        language: ``"c"`` or ``"c++"`` (``"ir"`` when added as IR).
        provenance: Where it came from.
        o0_size: Binary size (text + data) after ``default<O0>``.
        oz_size: Binary size after ``default<Oz>``.
        instructions: IR instructions of the unoptimized IR.
        tokens: Tokens of the flag-tuning prompt holding this IR.
        token_counter: Which counter measured ``tokens``.
        llvm_version: The LLVM that made and measured it.
    """

    id: str
    split: str
    language: str
    provenance: Provenance
    o0_size: int
    oz_size: int
    instructions: int
    tokens: int
    token_counter: str
    llvm_version: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``"function"`` for a unit split from a translation unit, else ``"unit"``."""
        return "function" if self.provenance.parent else "unit"

    @property
    def ir_path(self) -> str:
        """Path of the IR file relative to the corpus folder."""
        return f"ir/{self.id[:2]}/{self.id}.ll"

    def gcc_path(self, language: str | None = None) -> str:
        """Path of the gzipped GCC-preprocessed source relative to the corpus folder."""
        suffix = PREPROCESSED_SUFFIX.get(language or self.language, ".i")
        return f"gcc/{self.id[:2]}/{self.id}{suffix}.gz"

    def gcc_source(self, root: Path) -> GccSource | None:
        """What GCC needs to compile this unit, from a corpus in ``root``; None when the
        corpus keeps no GCC source for it (added without GCC, or before sources were kept)."""
        kept = self.extra.get("gcc")
        if not isinstance(kept, Mapping) or not kept.get("source"):
            return None
        target = kept.get("target")
        return GccSource(
            Path(root) / str(kept["source"]),
            tuple(str(flag) for flag in kept.get("flags", ())),
            str(target) if target else None,
            str(kept.get("language") or self.language),
        )

    def to_json(self) -> dict[str, Any]:
        """A flat JSON object (one manifest line)."""
        record = asdict(self)
        provenance = record.pop("provenance")
        provenance["command"] = list(provenance["command"])
        record.update(provenance)
        record["kind"] = self.kind
        record["ir_path"] = self.ir_path
        record["extra"] = dict(self.extra)
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Unit:
        """Reads a manifest line written by :meth:`to_json`."""
        provenance = Provenance(
            origin=record["origin"],
            package=record["package"],
            version=record.get("version", ""),
            file=record.get("file", ""),
            licence=record.get("licence", "unknown"),
            command=tuple(record.get("command", ())),
            function=record.get("function"),
            parent=record.get("parent"),
        )
        return cls(
            id=record["id"],
            split=record["split"],
            language=record["language"],
            provenance=provenance,
            o0_size=record["o0_size"],
            oz_size=record["oz_size"],
            instructions=record["instructions"],
            tokens=record["tokens"],
            token_counter=record["token_counter"],
            llvm_version=record["llvm_version"],
            extra=record.get("extra", {}),
        )


@dataclass(frozen=True)
class Failure:
    """Something that could not be added: a package, a file or a function."""

    origin: str
    package: str
    file: str
    stage: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


class CorpusStore:
    """A corpus folder (see the module docstring); created on first write."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.manifest_path = self.root / "manifest.jsonl"
        self.failures_path = self.root / "failures.jsonl"
        self.packages_path = self.root / "packages.json"
        self._ids: dict[str, str] | None = None

    def _ensure(self) -> None:
        (self.root / "ir").mkdir(parents=True, exist_ok=True)

    def units(self) -> Iterator[Unit]:
        """The units in the order they were added (a torn last line is skipped)."""
        if not self.manifest_path.is_file():
            return
        with self.manifest_path.open() as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    yield Unit.from_json(json.loads(line))
                except (json.JSONDecodeError, KeyError) as error:
                    if not line.endswith("\n"):
                        return  # an interrupted write; the unit is added again on rerun
                    raise InvalidInput(
                        f"{self.manifest_path}:{number}: not a manifest record ({error})."
                    ) from error

    def split_of(self, unit_id: str) -> str | None:
        """The split holding ``unit_id``, or None when it is not in the corpus."""
        if self._ids is None:
            self._ids = {unit.id: unit.split for unit in self.units()}
        return self._ids.get(unit_id)

    def read_ir(self, unit: Unit | str) -> str:
        """The IR text of a unit (or of a unit id)."""
        unit_id = unit if isinstance(unit, str) else unit.id
        path = self.root / "ir" / unit_id[:2] / f"{unit_id}.ll"
        if not path.is_file():
            raise InvalidInput(f"{path}: the corpus has no IR for unit {unit_id}.")
        return path.read_text()

    def add(self, unit: Unit, ir: str, gcc_source: str | None = None) -> bool:
        """Stores a unit and its IR; False (nothing written) when its hash is already in.

        The IR file (and the GCC-preprocessed source, gzipped, where ``gcc_source`` is
        given and ``unit.extra["gcc"]`` names its file) is written before the manifest
        line, so a manifest entry always has its files.
        """
        if self.split_of(unit.id) is not None:
            return False
        self._ensure()
        atomic_write_text(self.root / unit.ir_path, ir)
        kept = unit.extra.get("gcc")
        if gcc_source is not None and isinstance(kept, Mapping) and kept.get("source"):
            atomic_write_bytes(self.root / str(kept["source"]), gzip.compress(gcc_source.encode(), mtime=0))
        with self.manifest_path.open("a") as manifest:
            manifest.write(json.dumps(unit.to_json(), sort_keys=True) + "\n")
        assert self._ids is not None
        self._ids[unit.id] = unit.split
        return True

    def remove_package(self, origin: str, package: str) -> int:
        """Drops a package's units, their IR and its failures (before a rebuild).

        The manifest and the failure list are rewritten to temporary files and renamed
        into place, so an interruption leaves either the old or the new corpus.

        Returns:
            How many units were removed.
        """

        def ours(record: Mapping[str, Any]) -> bool:  # manifest and failure records are flat
            return bool(record.get("origin") == origin and record.get("package") == package)

        removed = 0
        for path in (self.manifest_path, self.failures_path):
            if not path.is_file():
                continue
            kept = []
            for line in path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line
                if not ours(record):
                    kept.append(line + "\n")
                elif path == self.manifest_path:
                    removed += 1
                    unit = Unit.from_json(record)
                    (self.root / unit.ir_path).unlink(missing_ok=True)
                    if (gcc := unit.gcc_source(self.root)) is not None:
                        gcc.path.unlink(missing_ok=True)
            atomic_write_text(path, "".join(kept))
        self._ids = None
        return removed

    def record_failure(self, failure: Failure) -> None:
        """Appends a failure to ``failures.jsonl``."""
        self._ensure()
        with self.failures_path.open("a") as failures:
            failures.write(json.dumps(failure.to_json(), sort_keys=True) + "\n")

    def failures(self) -> list[Failure]:
        """Everything recorded as failed, in order."""
        if not self.failures_path.is_file():
            return []
        return [Failure(**json.loads(line)) for line in self.failures_path.read_text().splitlines() if line]

    def pinned_packages(self) -> dict[str, dict[str, str]]:
        """Pinned source packages: name to ``{"version", "dsc_sha256", "split", ...}``."""
        if not self.packages_path.is_file():
            return {}
        pinned: dict[str, dict[str, str]] = json.loads(self.packages_path.read_text())
        return pinned

    def pin_package(self, name: str, record: Mapping[str, str]) -> None:
        """Records the version of a source package the corpus was built from."""
        self._ensure()
        pinned = self.pinned_packages()
        pinned[name] = dict(record)
        atomic_write_text(self.packages_path, json.dumps(pinned, indent=2, sort_keys=True) + "\n")

    def write_parquet(self, path: Path | None = None) -> Path:
        """Writes the manifest as Parquet (``manifest.parquet`` by default).

        Raises:
            LlmCompilerError: pyarrow is not installed.
        """
        target = path or self.root / "manifest.parquet"
        rows = [unit.to_json() for unit in self.units()]
        write_parquet(target, rows, json_columns=["extra"], required=True)
        return target
