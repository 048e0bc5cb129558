"""The programs a dataset is made from: a corpus, a manifest, or source files.

``--programs`` names a corpus folder (its ``manifest.jsonl`` is read), a manifest file
(IR paths are relative to its folder), or C/C++/IR files and folders. Programs are
read one at a time, so a dataset of any size is generated in constant memory; each
carries its split (from the corpus, which splits by package; for plain files, by the
file's folder with :func:`~llm_compiler.corpus.builder.split_for`) and its provenance.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.corpus.builder import split_for
from llm_compiler.corpus.inputs import expand_targets
from llm_compiler.corpus.store import Unit
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.frontend import FrontendOptions


@dataclass(frozen=True)
class ProgramRecord:
    """A program to make samples of, with its split and where it came from.

    ``path`` is read (and, for sources, compiled) by the worker that handles it, so
    the driver never holds more than the records in flight.
    """

    name: str
    path: Path
    split: str
    provenance: dict[str, Any] = field(default_factory=dict)
    options: FrontendOptions | None = None
    unit_id: str | None = None

    def key(self) -> str:
        """What identifies the program in resume state: its unit id, else its path."""
        return self.unit_id or str(self.path)


def provenance_fields(**fields: str | None) -> dict[str, str | None]:
    """The provenance of a sample, always with the same keys (one schema per dataset)."""
    keys = ("origin", "package", "version", "file", "function", "licence")
    unknown = set(fields) - set(keys)
    if unknown:
        raise ValueError(f"unknown provenance fields {sorted(unknown)}")
    return {key: fields.get(key) for key in keys}


def _from_manifest(manifest: Path) -> Iterator[ProgramRecord]:
    root = manifest.parent
    with manifest.open() as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                unit = Unit.from_json(json.loads(line))
            except (json.JSONDecodeError, KeyError) as error:
                if not line.endswith("\n"):
                    return
                raise InvalidInput(f"{manifest}:{number}: not a corpus manifest record ({error}).") from error
            provenance = provenance_fields(
                origin=unit.provenance.origin,
                package=unit.provenance.package,
                version=unit.provenance.version,
                file=unit.provenance.file,
                function=unit.provenance.function,
                licence=unit.provenance.licence,
            )
            name = f"{unit.provenance.package}/{unit.provenance.file}"
            if unit.provenance.function:
                name += f":{unit.provenance.function}"
            yield ProgramRecord(name, root / unit.ir_path, unit.split, provenance, unit_id=unit.id)


def iter_programs(targets: Sequence[str | Path], options: FrontendOptions) -> Iterator[ProgramRecord]:
    """Programs named by ``--programs`` (see the module docstring).

    Raises:
        InvalidInput: A target does not exist or holds no program.
    """
    for target in map(Path, targets):
        if target.is_dir() and (target / "manifest.jsonl").is_file():
            yield from _from_manifest(target / "manifest.jsonl")
        elif target.is_file() and target.name.endswith("manifest.jsonl"):
            yield from _from_manifest(target)
        else:
            for spec in expand_targets([target], options):
                group = spec.path.resolve().parent.name
                provenance = provenance_fields(origin="files", package=group, file=str(spec.path))
                yield ProgramRecord(str(spec.path), spec.path, split_for(group), provenance, spec.options)


def load_program(record: ProgramRecord, compiler: Compiler) -> Program:
    """Reads or compiles a record's program.

    A corpus unit's IR is read back through LLVM, as ``tune`` reads a ``.ll`` file:
    the text LLVM prints again can differ from the stored one (use-list order shows in
    the ``; preds`` comments), and the program id, the sizes and a tuning run's labels
    are those of the text LLVM prints. It is read from stdin, so no local path enters
    the ModuleID line of a prompt.
    """
    if record.unit_id is not None:
        try:
            ir = record.path.read_text()
        except OSError as error:
            raise InvalidInput(f"{record.path}: cannot read the unit's IR ({error}).") from error
        return replace(compiler.load_ir(ir, record.name), source=str(record.path))
    return compiler.load(record.path, record.options)
