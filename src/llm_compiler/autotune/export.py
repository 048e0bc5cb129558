"""Writing a tuning run's results: summary.json, JSONL and Parquet tables, objects.

``--out DIR`` of ``llm-compiler tune`` gets:

* ``summary.json``: the run's figures and, per program, the -Oz size, the best size,
  the best pipeline (the exact ``opt -passes=`` text), the compiles and the verdict;
* ``best.jsonl``: one :class:`~llm_compiler.autotune.tuner.ProgramResult` per line;
* ``evaluations.jsonl``: every evaluation of the run, joined with its measurement;
* ``best.parquet`` and ``evaluations.parquet`` when pyarrow is installed
  (``pip install 'llm-compiler[parquet]'``);
* ``objects/NAME.o``: each program compiled with its best list (its per-function
  lists joined, where the run kept some);
* ``tune.sqlite``: the store itself (``--resume`` continues from it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from llm_compiler.autotune.function_lists import build_function_lists
from llm_compiler.autotune.tuner import TuneReport
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.core.store import Store
from llm_compiler.files import atomic_write_text, write_jsonl, write_parquet

#: Columns of ``best`` whose values are lists (stored in Parquet as JSON text).
BEST_JSON_COLUMNS = ("rejected",)


def safe_name(name: str) -> str:
    """A file name for a program name (paths and odd characters flattened)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "program"


def export_run(
    out: Path, report: TuneReport, store: Store, compiler: Compiler, programs: Iterable[Program]
) -> list[Path]:
    """Writes the run's files under ``out``; returns what was written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "summary.json", out / "best.jsonl", out / "evaluations.jsonl"]
    atomic_write_text(out / "summary.json", json.dumps(report.summary(), indent=2) + "\n")
    best = write_jsonl(out / "best.jsonl", (p.to_json() for p in report.programs))
    evaluations = write_jsonl(out / "evaluations.jsonl", store.iter_evaluations())
    if write_parquet(out / "best.parquet", best, json_columns=BEST_JSON_COLUMNS):
        written.append(out / "best.parquet")
    if write_parquet(out / "evaluations.parquet", evaluations):
        written.append(out / "evaluations.parquet")
    by_id = {program.id: program for program in programs}
    objects = out / "objects"
    objects.mkdir(exist_ok=True)
    for result in report.tuned:
        program = by_id.get(result.program_id)
        if program is not None:
            target = objects / f"{safe_name(result.program)}.o"
            if result.function_lists is not None:
                joined = build_function_lists(compiler, program, result.function_lists)
                target.write_bytes(compiler.lower(joined, name=program.name))
            else:
                compiler.compile_to(program, compiler.passes(result.best_pipeline), target)
    written.append(objects)
    return written
