"""The predictor's training data, made from tuning runs: candidates, sizes and features.

The built-in predictor learns from what ``llm-compiler tune`` found, nothing else:

1. **Units**: every program a tuning run (its ``tune.sqlite``) tuned successfully, read
   back as the run tuned it (the store keeps each unit's IR, so the build's own flags
   are kept and the front end is not run again), with its -Oz size and IR features
   (:mod:`llm_compiler.predictor.features`). For a store written before units were kept,
   from the source the run recorded; a program whose IR no longer matches the tuned one
   (another front-end flag, an edited source) is then left out and counted.
2. **Pool**: the lists the runs kept for their programs after validation (the
   ``final`` phase), most frequent first, up to ``pool`` lists. Only validated lists:
   a list that validation rejected wherever it was tried (a newgvn list that breaks
   PassListEval's programs, say) would be ranked for its size and then rejected again
   by every user's gate, a wasted measurement.
3. **Matrix**: every unit measured under every pool list. The runs measured most pairs
   already (broadcast tries the most common best lists on every program); the rest are
   measured now with the same engine, in jobs any executor runs (a local pool or Dask).
4. **Candidates** (the coreset): ``candidates`` lists chosen greedily from the pool, each
   adding the most to the summed log gain over -Oz of the best chosen list per unit
   (ties: the more frequent list, then the text). A predictor ranks these for a unit.

Everything is ordered by stable keys (program ids, pipeline texts), so the same runs
give the same data, and the data records its provenance: runs, packages, LLVM version,
the runs' search settings.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.core.compiler import Compiler, process_compiler
from llm_compiler.core.executors import Executor, InlineExecutor, Job
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import Store
from llm_compiler.errors import CommandFailed, InvalidInput, InvalidPassList, LlmCompilerError
from llm_compiler.predictor.features import FEATURE_NAMES, FEATURE_VERSION, ir_features

#: Lists of the pool (step 2 of the module docstring), by default.
POOL_SIZE = 200
#: Candidates chosen from the pool (step 4), by default.
CANDIDATES = 48


@dataclass(frozen=True)
class TrainingUnit:
    """One tuned program.

    Attributes:
        program_id: Its stable id. name: Its name in the run. package: The first part of
        its name (held-out evaluation groups by it). oz_size: -Oz's size in bytes.
        features: Its IR features (aligned with ``FEATURE_NAMES``).
    """

    program_id: str
    name: str
    package: str
    oz_size: int
    features: tuple[float, ...]


@dataclass(frozen=True)
class TrainingData:
    """Units, candidate lists and the size of every unit under every candidate.

    Attributes:
        units: The units, by program id.
        pipelines: The candidate lists (exact ``opt -passes=`` texts), in the greedy order.
        sizes: ``sizes[u][k]``: unit ``u``'s binary size under list ``k`` (None: it failed).
        frequency: How many units kept each candidate after their own tuning.
        provenance: Where the data comes from.
    """

    units: tuple[TrainingUnit, ...]
    pipelines: tuple[str, ...]
    sizes: tuple[tuple[int | None, ...], ...]
    frequency: tuple[int, ...]
    provenance: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def gain(self, unit: int, candidate: int) -> float:
        """log(-Oz size / size) of a unit under a candidate, 0 when not smaller or failed."""
        size = self.sizes[unit][candidate]
        oz = self.units[unit].oz_size
        return math.log(oz / size) if size is not None and 0 < size < oz else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "feature_version": FEATURE_VERSION,
            "feature_names": list(FEATURE_NAMES),
            "units": [
                {
                    "program_id": u.program_id,
                    "name": u.name,
                    "package": u.package,
                    "oz_size": u.oz_size,
                    "features": list(u.features),
                }
                for u in self.units
            ],
            "pipelines": list(self.pipelines),
            "frequency": list(self.frequency),
            "sizes": [list(row) for row in self.sizes],
            "provenance": self.provenance,
        }


def read_runs(runs: Sequence[Path]) -> list[tuple[Path, Store]]:
    """The stores of tuning runs given as ``tune --out`` folders or ``.sqlite`` files.

    Raises:
        InvalidInput: A run that is not there.
    """
    stores = []
    for run in runs:
        path = run / "tune.sqlite" if run.is_dir() else run
        if not path.is_file():
            raise InvalidInput(
                f"{run}: not a tuning run (no {path.name}); give the folder of `llm-compiler tune --out DIR` "
                "or its tune.sqlite."
            )
        stores.append((path, Store(path)))
    return stores


def build_training_data(
    compiler: Compiler,
    runs: Sequence[Path],
    *,
    pool: int = POOL_SIZE,
    candidates: int = CANDIDATES,
    executor: Executor | None = None,
    settings: TuneSettings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    objective: Objective = DEFAULT_OBJECTIVE,
) -> TrainingData:
    """Steps 1 to 4 of the module docstring.

    Args:
        compiler: Loads the programs and checks the lists (the installed LLVM).
        runs: Tuning runs (``tune --out`` folders or their ``tune.sqlite``).
        pool: Lists measured on every unit.
        candidates: Lists chosen from the pool.
        executor: Where missing measurements run (default: this process).
        settings: The engine settings of measurement jobs (default: the compiler's).
        progress: Called with (what, done, total) as measurements complete.
        objective: What the sizes measure (binary size by default); the predictor
            learns to rank lists in it.

    Raises:
        InvalidInput: No run, no usable unit, runs of another LLVM version, or runs
            that counted IR only while ``objective`` needs object sizes.
    """
    llvm = compiler.llvm_version
    units: dict[str, TrainingUnit] = {}
    known: dict[str, dict[str, int | None]] = {}
    programs: dict[str, Program] = {}
    kept: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    metas = []
    for path, store in read_runs(runs):
        try:
            meta = store.meta()
            if meta.get("llvm_version") != llvm:
                raise InvalidInput(
                    f"{path}: tuned with LLVM {meta.get('llvm_version')}, not the installed {llvm}; retune "
                    "with this LLVM (sizes of another version would teach the wrong lists)."
                )
            run_objective = Objective.parse(meta.get("objective", DEFAULT_OBJECTIVE))
            if objective.needs_object and not run_objective.needs_object:
                raise InvalidInput(
                    f"{path}: tuned with --objective {run_objective.value}, which measures no object; "
                    f"training for {objective.value} needs runs that did (tune without that objective)."
                )
            metas.append({"run": str(path), **{k: meta.get(k) for k in ("seed", "budget", "proposer")}})
            for record in store.programs():
                program_id = record["program_id"]
                if record["status"] != "ok" or program_id in units:
                    continue
                rows = store.evaluations(program_id, llvm)
                oz = rows.get((OZ_PIPELINE, "exact"))
                final = store.result(program_id, "final")
                oz_value = oz.cost(objective) if oz is not None else float("inf")
                if oz is None or oz_value == float("inf") or final is None:
                    skipped["not tuned to the end"] += 1
                    continue
                program = _tuned_program(compiler, store, record)
                if program is None or program.id != program_id:
                    skipped["source missing or changed since tuning"] += 1
                    continue
                programs[program_id] = program
                units[program_id] = TrainingUnit(
                    program_id,
                    record["name"],
                    record["name"].strip("/").split("/")[0],
                    int(oz_value),
                    ir_features(program.ir),
                )
                known[program_id] = {
                    pipeline: (int(row.cost(objective)) if row.cost(objective) != float("inf") else None)
                    for (pipeline, mode), row in rows.items()
                    if mode == "exact"
                }
                if final[0] != OZ_PIPELINE and (known[program_id].get(final[0]) or oz_value) < oz_value:
                    kept[final[0]] += 1
        finally:
            store.close()
    if not units:
        raise InvalidInput(
            "No usable unit in the tuning runs"
            + (f" ({', '.join(f'{n} {why}' for why, n in skipped.items())})" if skipped else "")
            + "; tune some programs first: llm-compiler tune PROGRAMS --out RUN."
        )
    order = sorted(units)
    pool_lists = _pool(compiler, kept, pool)
    settings = replace(settings, objective=objective) if settings is not None else None
    _measure_missing(
        compiler, [programs[i] for i in order], pool_lists, known, executor, settings, progress, objective
    )
    matrix = [[known[i].get(p) for p in pool_lists] for i in order]
    unit_list = [units[i] for i in order]
    chosen = select_candidates(unit_list, pool_lists, matrix, [kept[p] for p in pool_lists], candidates)
    packages = Counter(unit.package for unit in unit_list)
    return TrainingData(
        tuple(unit_list),
        tuple(pool_lists[k] for k in chosen),
        tuple(tuple(row[k] for k in chosen) for row in matrix),
        tuple(kept[pool_lists[k]] for k in chosen),
        {
            "llvm_version": llvm,
            "objective": objective.value,
            "runs": metas,
            "packages": dict(sorted(packages.items())),
            "units": len(unit_list),
            "skipped": dict(skipped),
            "pool": len(pool_lists),
            "candidates": len(chosen),
        },
    )


def pool_from_runs(compiler: Compiler, runs: Sequence[Path], size: int = POOL_SIZE) -> list[str]:
    """The lists tuning runs kept after validation, most often kept first (step 2 of the
    module docstring), each accepted by this LLVM.

    Raises:
        InvalidInput: A run that is not there, or one tuned with another LLVM.
    """
    kept: Counter[str] = Counter()
    for path, store in read_runs(runs):
        try:
            meta = store.meta()
            if meta.get("llvm_version") != compiler.llvm_version:
                raise InvalidInput(
                    f"{path}: tuned with LLVM {meta.get('llvm_version')}, not the installed "
                    f"{compiler.llvm_version}; retune with this LLVM."
                )
            for record in store.programs():
                final = store.result(record["program_id"], "final")
                if record["status"] == "ok" and final is not None:
                    kept[final[0]] += 1
        finally:
            store.close()
    return _pool(compiler, kept, size)


def data_from_table(
    compiler: Compiler, tables: Sequence[Any], objective: Objective = DEFAULT_OBJECTIVE
) -> TrainingData:
    """Training data from training tables (:mod:`llm_compiler.predictor.table`): their
    units of the train split by their pools' lists.

    Tables of different pools join by unit: the lists are those of every table (in the
    order given), and the units those every table measured (a unit missing from one would
    lack its lists' sizes), so a table of new lists over the same units adds columns.

    Raises:
        InvalidInput: Tables of another LLVM, feature version or objective, or no unit of
            the train split that every table holds.
    """
    pipelines: list[str] = []
    rows: dict[str, dict[str, int | None]] = {}
    found: dict[str, Any] = {}
    for number, table in enumerate(tables):
        header = table.header
        if header["llvm_version"] != compiler.llvm_version:
            raise InvalidInput(
                f"a table measured with LLVM {header['llvm_version']}, not the installed "
                f"{compiler.llvm_version}; measure it again with this LLVM (llm-compiler predictor table)."
            )
        if header["feature_version"] != FEATURE_VERSION or header["objective"] != objective.value:
            raise InvalidInput(
                f"a table of feature version {header['feature_version']} and objective "
                f"{header['objective']}; this training needs version {FEATURE_VERSION} and "
                f"{objective.value}: measure it again."
            )
        pipelines += [p for p in table.pipelines if p not in pipelines]
        held = {u.program_id: u for u in table.units if u.split == "train"}
        for program_id, unit in held.items():
            if number == 0:
                found[program_id] = unit
                rows[program_id] = {}
            if program_id in rows:
                rows[program_id].update(zip(table.pipelines, unit.sizes, strict=True))
        for program_id in [i for i in rows if i not in held]:
            del rows[program_id]
    if not rows:
        raise InvalidInput(
            "The tables hold no unit of the train split that all of them measured; the predictor trains on "
            "the train split only, and joins tables by unit."
        )
    order = sorted(rows)
    units = [found[i] for i in order]
    packages = Counter(u.package for u in units)
    return TrainingData(
        tuple(TrainingUnit(u.program_id, u.name, u.package, u.oz_size, u.features) for u in units),
        tuple(pipelines),
        tuple(tuple(rows[i][p] for p in pipelines) for i in order),
        tuple(0 for _ in pipelines),
        {
            "llvm_version": compiler.llvm_version,
            "objective": objective.value,
            "tables": [
                {
                    "pool_hash": t.header["pool_hash"],
                    "lists": len(t.pipelines),
                    "units": len(t.units),
                    "shards": len(t.shards),
                    "seconds": round(sum(s["seconds"] for s in t.shards)),
                }
                for t in tables
            ],
            "packages": dict(sorted(packages.items())),
            "units": len(units),
            "pool": len(pipelines),
        },
    )


def select_candidates(
    units: Sequence[TrainingUnit],
    pipelines: Sequence[str],
    matrix: Sequence[Sequence[int | None]],
    frequency: Sequence[int],
    count: int,
) -> list[int]:
    """Indices of ``count`` lists chosen greedily by summed log gain (module docstring, step 4).

    Lists that add nothing once the best are chosen follow, most frequent first, until
    ``count`` are chosen or the pool is used up.
    """
    gains = [
        [math.log(u.oz_size / s) if s is not None and 0 < s < u.oz_size else 0.0 for s in row]
        for u, row in zip(units, matrix, strict=True)
    ]
    best = [0.0] * len(units)
    chosen: list[int] = []
    remaining = set(range(len(pipelines)))
    while remaining and len(chosen) < count:
        added = {k: sum(max(0.0, g[k] - b) for g, b in zip(gains, best, strict=True)) for k in remaining}
        pick = min(remaining, key=lambda k: (-round(added[k], 12), -frequency[k], pipelines[k]))
        chosen.append(pick)
        remaining.discard(pick)
        best = [max(b, g[pick]) for g, b in zip(gains, best, strict=True)]
    return chosen


def _tuned_program(compiler: Compiler, store: Store, record: dict[str, Any]) -> Program | None:
    """The unit as the run tuned it: its IR from the store, or for a store written before
    units were kept, its source through the front end (None when that is gone or fails)."""
    ir = store.program_ir(record["program_id"])
    if ir is not None:
        return Program(name=record["name"], ir=ir, language="ir", source=record["source"])
    source = record["source"]
    if not source or not Path(source).is_file():
        return None
    try:
        return compiler.load(Path(source))
    except LlmCompilerError:
        return None


def _pool(compiler: Compiler, kept: Counter[str], size: int) -> list[str]:
    """Kept lists by frequency, each accepted by this LLVM."""
    pool: list[str] = []
    for pipeline in sorted(kept, key=lambda p: (-kept[p], p)):
        if pipeline == OZ_PIPELINE:
            continue
        try:
            compiler.passes(pipeline)
        except InvalidPassList:
            continue
        pool.append(pipeline)
        if len(pool) >= size:
            break
    return pool


def measure_lists(
    settings: TuneSettings, program: Program, pipelines: tuple[str, ...]
) -> tuple[str, list[Any]]:
    """A job: ``program``'s size under each list in the settings' objective (None where
    the compile failed)."""
    return program.id, sizes_under(process_compiler(settings), program, pipelines, settings.objective)


def measure_settings(compiler: Compiler, objective: Objective) -> TuneSettings:
    """Settings of measurement jobs that compile as ``compiler`` does, in ``objective``."""
    return TuneSettings(
        llvm_bin=str(compiler.toolchain.bin_dir),
        timeout=compiler.timeout,
        engine=compiler.engine,
        allow_extra=compiler.allow_extra,
        objective=objective,
    )


def sizes_under(
    compiler: Compiler, program: Program, pipelines: Sequence[str], objective: Objective
) -> list[int | None]:
    """``program``'s value in ``objective`` under each list (None where the compile failed)."""
    sizes: list[int | None] = []
    for pipeline in pipelines:
        try:
            sizes.append(compiler.value(program, compiler.passes(pipeline), objective)[0])
        except (CommandFailed, InvalidPassList):
            sizes.append(None)
    return sizes


def _measure_missing(
    compiler: Compiler,
    programs: Iterable[Program],
    pipelines: Sequence[str],
    known: dict[str, dict[str, int | None]],
    executor: Executor | None,
    settings: TuneSettings | None,
    progress: Callable[[str, int, int], None] | None,
    objective: Objective = DEFAULT_OBJECTIVE,
) -> None:
    settings = settings or measure_settings(compiler, objective)
    jobs: list[Job] = []
    asked: dict[str, tuple[str, ...]] = {}
    for program in programs:
        missing = tuple(p for p in pipelines if p not in known[program.id])
        if missing:
            asked[program.id] = missing
            jobs.append((measure_lists, (settings, program, missing)))
    total = sum(len(m) for m in asked.values())
    done = 0
    for program_id, sizes in (executor or InlineExecutor()).run(jobs):
        known[program_id].update(zip(asked[program_id], sizes, strict=True))
        done += len(sizes)
        if progress is not None:
            progress("measuring candidates", done, total)
