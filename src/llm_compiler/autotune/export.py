"""Writing a tuning run's results: summary.json, JSONL and Parquet tables, objects.

``--out DIR`` of ``llm-compiler tune`` gets:

* ``summary.json``: the run's figures and, per program, the -Oz size, the best size,
  the best pipeline (the exact ``opt -passes=`` text), the compiles and the verdict;
* ``best.jsonl``: one :class:`~llm_compiler.autotune.tuner.ProgramResult` per line;
* ``evaluations.jsonl``: every evaluation of the run, joined with its measurement;
* ``best.parquet`` and ``evaluations.parquet`` when pyarrow is installed
  (``pip install 'llm-compiler[parquet]'``);
* ``objects/NAME.o``: each program compiled with its best list;
* ``tune.sqlite``: the store itself (``--resume`` continues from it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llm_compiler.autotune.store import Store
from llm_compiler.autotune.tuner import TuneReport
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = list(records)
    with path.open("w") as stream:
        for record in rows:
            stream.write(json.dumps(record) + "\n")
    return rows


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    table = pa.Table.from_pylist(
        [{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]
    )
    pq.write_table(table, path)
    return True


def safe_name(name: str) -> str:
    """A file name for a program name (paths and odd characters flattened)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "program"


def export_run(
    out: Path, report: TuneReport, store: Store, compiler: Compiler, programs: Iterable[Program]
) -> list[Path]:
    """Writes the run's files under ``out``; returns what was written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "summary.json", out / "best.jsonl", out / "evaluations.jsonl"]
    (out / "summary.json").write_text(json.dumps(report.summary(), indent=2) + "\n")
    best = _write_jsonl(out / "best.jsonl", (p.to_json() for p in report.programs))
    evaluations = _write_jsonl(out / "evaluations.jsonl", store.iter_evaluations())
    if _write_parquet(out / "best.parquet", best):
        written.append(out / "best.parquet")
    if _write_parquet(out / "evaluations.parquet", evaluations):
        written.append(out / "evaluations.parquet")
    by_id = {program.id: program for program in programs}
    objects = out / "objects"
    objects.mkdir(exist_ok=True)
    for result in report.tuned:
        program = by_id.get(result.program_id)
        if program is not None:
            target = objects / f"{safe_name(result.program)}.o"
            compiler.compile_to(program, compiler.passes(result.best_pipeline), target)
    written.append(objects)
    return written
