"""The predictor's training table: every unit's features and every pool list's size on it.

A ranker learns from one matrix: units (their IR features, package, -Oz size) by the
lists of a pool (each unit's measured size under each). The tuning stores hold far more
than that (every list a search tried) and are large; the table keeps only what the
ranker needs, compact enough to commit beside the ranker or to rebuild, and is made in
**shards** that resume:

* ``table.json``: the format, the LLVM version and its pass set's hash, the feature
  version and names, the objective and the **pool** (the lists measured on every unit,
  exact ``opt -passes=`` texts) with where each came from. Fixed when the table is made;
  a later call with another pool or LLVM is refused.
* ``shards/PACKAGE-KIND-NNNN.jsonl.gz``: the translation units (``unit``) or function
  units (``function``) of one package, ``shard_size`` at a time in the order of their
  ids, one JSON line each (``id``, ``name``, ``package``, ``split``, ``oz``,
  ``features``, ``sizes`` aligned with the pool, ``null`` where the compile failed),
  after a first line saying how the shard was made (units, compiles, seconds of
  measuring, the executor). A shard is written whole, atomically, once all its
  units are measured, so an interrupted run loses at most the shards under way; a run
  skips the shards already written. Adding a package adds its shards and moves no other.
  Shards are measured round-robin over packages, translation units first, so a run
  stopped early still holds a sample of every package to learn from.

Measurements are jobs of one unit each (all pool lists in that unit's worker), so any
executor runs them: the local pool, or Dask where there is more than one machine. The
same units, pool and LLVM give the same rows, byte for byte (only each shard's first
line, its timing, differs).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.core.compiler import Compiler, process_compiler
from llm_compiler.core.executors import Executor, InlineExecutor, Job
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput, InvalidPassList, LlmCompilerError
from llm_compiler.files import atomic_write_bytes, atomic_write_text
from llm_compiler.predictor.dataset import measure_settings, sizes_under
from llm_compiler.predictor.features import FEATURE_NAMES, FEATURE_VERSION, ir_features
from llm_compiler.predictor.ranker import pass_set_hash

#: The table's format; a change that old readers cannot read bumps it.
TABLE_FORMAT = 1
#: Units per shard, by default.
SHARD_SIZE = 100


@dataclass(frozen=True)
class TableUnit:
    """One measured unit: ``sizes[k]`` is its size under pool list ``k`` (None: failed)."""

    program_id: str
    name: str
    package: str
    split: str
    oz_size: int
    features: tuple[float, ...]
    sizes: tuple[int | None, ...]


@dataclass(frozen=True)
class Table:
    """A table read back: its header and its units, in shard order."""

    header: dict[str, Any]
    units: tuple[TableUnit, ...]
    shards: tuple[dict[str, Any], ...]

    @property
    def pipelines(self) -> tuple[str, ...]:
        return tuple(self.header["pipelines"])


def pool_hash(pipelines: Sequence[str]) -> str:
    """A short hash of a pool's lists, in order."""
    return hashlib.sha256("\n".join(pipelines).encode()).hexdigest()[:16]


def _header(
    compiler: Compiler, pipelines: Sequence[str], sources: dict[str, str], objective: Objective
) -> dict[str, Any]:
    return {
        "format": TABLE_FORMAT,
        "llvm_version": compiler.llvm_version,
        "llvm_major": int(compiler.llvm_version.split(".")[0]),
        "pass_set": pass_set_hash(compiler),
        "feature_version": FEATURE_VERSION,
        "feature_names": list(FEATURE_NAMES),
        "objective": objective.value,
        "pipelines": list(pipelines),
        "pool_hash": pool_hash(pipelines),
        "pool_sources": {pipeline: sources.get(pipeline, "") for pipeline in pipelines},
    }


def check_pool(compiler: Compiler, pipelines: Iterable[str]) -> list[str]:
    """The pool's lists, each parsed against this LLVM's pass grammar, -Oz and repeats dropped.

    Raises:
        InvalidInput: A list this LLVM does not accept.
    """
    pool: list[str] = []
    for pipeline in pipelines:
        try:
            compiler.passes(pipeline)
        except InvalidPassList as error:
            raise InvalidInput(f"pool list {pipeline!r}: {error}") from error
        if pipeline != OZ_PIPELINE and pipeline not in pool:
            pool.append(pipeline)
    return pool


def measure_unit(settings: TuneSettings, source: ProgramSource, pipelines: tuple[str, ...]) -> dict[str, Any]:
    """A job: one unit's features, -Oz size and size under each pool list.

    Returns a record with ``error`` set (and no sizes) when the unit itself cannot be
    loaded or -Oz fails on it; a failing pool list is ``None`` in ``sizes``.
    """
    started = time.perf_counter()
    compiler = process_compiler(settings)
    base = {"id": source.key(), "name": source.name, "package": _package(source), "split": source.split}
    try:
        program = source.load(compiler)
        oz = compiler.value(program, compiler.passes(OZ_PIPELINE), settings.objective)[0]
    except LlmCompilerError as error:
        return {**base, "error": str(error).splitlines()[0][:300], "seconds": time.perf_counter() - started}
    sizes = sizes_under(compiler, program, pipelines, settings.objective)
    return {
        **base,
        "oz": oz,
        "features": [_round(x) for x in ir_features(program.ir)],
        "sizes": sizes,
        "seconds": time.perf_counter() - started,
    }


def build_table(
    compiler: Compiler,
    sources: Iterable[ProgramSource],
    out: Path,
    pipelines: Sequence[str],
    *,
    pool_sources: dict[str, str] | None = None,
    shard_size: int = SHARD_SIZE,
    executor: Executor | None = None,
    settings: TuneSettings | None = None,
    objective: Objective = DEFAULT_OBJECTIVE,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Measures the shards of ``out`` not yet written (module docstring).

    Returns:
        Counts: ``shards`` in all, ``written`` now, ``skipped`` (there already), ``units``
        measured now, ``failed`` units (left out, with the reason in the shard's header).

    Raises:
        InvalidInput: ``out`` holds a table of another pool, LLVM, pass set, feature
            version or objective; an empty pool; a shard size below 1.
    """
    if shard_size < 1:
        raise InvalidInput(f"--shard-size must be at least 1, not {shard_size}.")
    pool = check_pool(compiler, pipelines)
    if not pool:
        raise InvalidInput("The pool is empty: give lists (--lists FILE, --tuning RUN or --shipped).")
    header = _header(compiler, pool, pool_sources or {}, objective)
    _claim(out, header)
    settings = settings or measure_settings(compiler, objective)
    by_group: dict[tuple[str, str], list[ProgramSource]] = defaultdict(list)
    for source in sources:
        by_group[(_package(source), "function" if source.provenance.get("function") else "unit")].append(
            source
        )
    # Shards are taken round-robin (every group's first, then every group's second...), so
    # a run stopped early holds a sample of every package, translation units first.
    rounds: dict[int, list[tuple[str, list[ProgramSource]]]] = defaultdict(list)
    for (package, kind), members in sorted(by_group.items()):
        members.sort(key=lambda source: source.key())
        for start in range(0, len(members), shard_size):
            name = f"{_safe(package)}-{kind}-{start // shard_size:04d}"
            rounds[start // shard_size].append((name, members[start : start + shard_size]))
    shards = {
        name: members
        for index in sorted(rounds)
        for name, members in sorted(
            rounds[index], key=lambda item: (item[0].split("-")[-2] != "unit", item[0])
        )
    }
    todo = {
        name: members
        for name, members in shards.items()
        if not (out / "shards" / f"{name}.jsonl.gz").is_file()
    }
    counts = {
        "shards": len(shards),
        "written": 0,
        "skipped": len(shards) - len(todo),
        "units": 0,
        "failed": 0,
    }
    jobs: list[Job] = []
    owner: dict[str, str] = {}
    for name, members in todo.items():
        for source in members:
            owner[source.key()] = name
            jobs.append((measure_unit, (settings, source, tuple(pool))))
    done: dict[str, list[dict[str, Any]]] = defaultdict(list)
    total = len(jobs)
    runner = executor or InlineExecutor()
    for finished, record in enumerate(runner.run(jobs), 1):
        name = owner[record["id"]]
        done[name].append(record)
        if len(done[name]) == len(todo[name]):
            counts["failed"] += _write_shard(out, name, done.pop(name), len(pool), runner.description)
            counts["written"] += 1
        counts["units"] += 1
        if progress is not None:
            progress(finished, total)
    return counts


def _claim(out: Path, header: dict[str, Any]) -> None:
    """Writes ``table.json``, or checks that the one there is for the same pool and LLVM."""
    path = out / "table.json"
    if path.is_file():
        try:
            existing = json.loads(path.read_text())
        except ValueError as error:
            raise InvalidInput(
                f"{path}: not a table header ({error}); remove {out} or choose another --out."
            ) from error
        for key in ("format", "llvm_version", "pass_set", "feature_version", "objective", "pool_hash"):
            if existing.get(key) != header[key]:
                raise InvalidInput(
                    f"{out}: a table made with another {key.replace('_', ' ')} ({existing.get(key)!r}, now "
                    f"{header[key]!r}); its shards would not line up. Use another --out, or the same pool "
                    "and LLVM."
                )
        return
    (out / "shards").mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(header, indent=1, sort_keys=True) + "\n")


def _write_shard(out: Path, name: str, records: list[dict[str, Any]], width: int, executor: str) -> int:
    records.sort(key=lambda record: record["id"])
    failed = [record for record in records if "error" in record]
    kept = [record for record in records if "error" not in record]
    head = {
        "shard": name,
        "units": len(kept),
        "failed": {record["name"]: record["error"] for record in failed},
        "compiles": (width + 1) * len(kept),
        "seconds": round(sum(record["seconds"] for record in records), 1),
        "executor": executor,
    }
    lines = [json.dumps(head, sort_keys=True)]
    for record in kept:
        row = {key: record[key] for key in ("id", "name", "package", "split", "oz", "features", "sizes")}
        lines.append(json.dumps(row, sort_keys=True, separators=(",", ":")))
    data = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0)
    atomic_write_bytes(out / "shards" / f"{name}.jsonl.gz", data)
    return len(failed)


def read_table(path: Path) -> Table:
    """Reads a table folder (``table.json`` and its shards).

    Raises:
        InvalidInput: Not a table, another format, or a shard that does not match its header.
    """
    try:
        header = json.loads((path / "table.json").read_text())
    except (OSError, ValueError) as error:
        raise InvalidInput(
            f"{path}: not a training table ({error}). Make one with: llm-compiler predictor table "
            f"PROGRAMS --out {path}"
        ) from error
    if header.get("format") != TABLE_FORMAT:
        raise InvalidInput(
            f"{path}: a table of format {header.get('format')}, this llm-compiler reads {TABLE_FORMAT}."
        )
    width = len(header["pipelines"])
    units: list[TableUnit] = []
    shards: list[dict[str, Any]] = []
    for shard in sorted((path / "shards").glob("*.jsonl.gz")):
        try:
            lines = gzip.decompress(shard.read_bytes()).decode().splitlines()
            shards.append(json.loads(lines[0]))
            for line in lines[1:]:
                row = json.loads(line)
                if len(row["sizes"]) != width or len(row["features"]) != len(header["feature_names"]):
                    raise ValueError("a row's width differs from the header's")
                units.append(
                    TableUnit(
                        row["id"],
                        row["name"],
                        row["package"],
                        row["split"],
                        int(row["oz"]),
                        tuple(float(x) for x in row["features"]),
                        tuple(None if s is None else int(s) for s in row["sizes"]),
                    )
                )
        except (OSError, ValueError, KeyError, IndexError, EOFError) as error:
            raise InvalidInput(
                f"{shard}: a damaged shard ({error}); delete it and run the table again."
            ) from error
    return Table(header, tuple(units), tuple(shards))


def _package(source: ProgramSource) -> str:
    return str(source.provenance.get("package") or source.name.strip("/").split("/")[0])


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._+" else "_" for c in name)


def _round(value: float) -> float:
    return float(f"{value:.6g}")
