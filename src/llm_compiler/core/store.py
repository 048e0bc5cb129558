"""The results store of a tuning run: SQLite in WAL mode, written as work completes.

Every evaluation is a row keyed by (program, pass list, mode, LLVM version), so nothing
is compiled twice for the same pair, and a run killed at any point (``kill -9``)
resumes from what was committed. Measurements are shared: evaluations whose optimized
IR is the same text point at one row of ``measurements``, keyed by the hash of that
text.

Tables:

* ``meta``: the run's settings (seed, budget, LLVM version...) for ``--resume`` checks;
* ``programs``: id, name, source and load status (a file that does not compile is
  recorded with the reason);
* ``measurements``: output-IR hash -> binary size, text, data, IR instructions;
* ``ir_counts``: output-IR hash -> IR instructions, for outputs counted without code
  generation (a run with the ``ir-instructions`` objective);
* ``evaluations``: program, pipeline, mode (``exact`` or ``stepwise``), LLVM version,
  outcome (``ok``, ``compile-fail``, ``timeout``), output hash, seconds, detail, phase;
* ``jobs``: the units of work completed (a random-search chunk, a program's
  minimization...), so a resumed run skips them, with the evaluations each one made;
* ``results``: per program and phase, the chosen pipeline and its size, and the final
  validated choice with the validation verdict.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.objective import Objective
from llm_compiler.errors import InvalidInput
from llm_compiler.files import enable_wal

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS programs (
    program_id TEXT PRIMARY KEY, name TEXT NOT NULL, source TEXT, status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS measurements (
    output_hash TEXT PRIMARY KEY, binary_size INTEGER NOT NULL, text INTEGER NOT NULL,
    data INTEGER NOT NULL, ir_instructions INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ir_counts (output_hash TEXT PRIMARY KEY, ir_instructions INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS evaluations (
    program_id TEXT NOT NULL, pipeline TEXT NOT NULL, mode TEXT NOT NULL,
    llvm_version TEXT NOT NULL, outcome TEXT NOT NULL, output_hash TEXT,
    seconds REAL NOT NULL, detail TEXT NOT NULL DEFAULT '', phase TEXT NOT NULL,
    PRIMARY KEY (program_id, pipeline, mode, llvm_version)
);
CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, evaluations INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS results (
    program_id TEXT NOT NULL, phase TEXT NOT NULL, pipeline TEXT NOT NULL,
    binary_size INTEGER NOT NULL, detail TEXT NOT NULL DEFAULT '', validated INTEGER,
    PRIMARY KEY (program_id, phase)
);
CREATE TABLE IF NOT EXISTS units (program_id TEXT PRIMARY KEY, ir BLOB NOT NULL);
"""


@dataclass(frozen=True)
class EvaluationRow:
    """One evaluation of a pass list on a program.

    Attributes:
        program_id: The program's stable id.
        pipeline: The ``opt -passes=`` text ("" for the unoptimized program).
        mode: ``"exact"`` (the whole pipeline, as ``opt`` runs it) or ``"stepwise"``.
        outcome: ``"ok"``, ``"compile-fail"``, ``"timeout"`` or ``"invalid"`` (refused by the
            pass-list gate).
        binary_size: text + data, when ok and lowered (None when the IR was only counted).
        text: Berkeley text, when ok and lowered.
        data: Berkeley data, when ok and lowered.
        ir_instructions: Instruction count of the optimized IR, when ok.
        output_hash: Hash of the optimized IR text, when ok.
        seconds: Wall time of the evaluation.
        detail: The error, for failures.
        phase: The search phase that asked for it (``random``, ``minimize``...).
    """

    program_id: str
    pipeline: str
    mode: str
    outcome: str
    binary_size: int | None = None
    text: int | None = None
    data: int | None = None
    ir_instructions: int | None = None
    output_hash: str | None = None
    seconds: float = 0.0
    detail: str = ""
    phase: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def size(self) -> float:
        """The binary size, or infinity for a failed evaluation (a cost)."""
        return float(self.binary_size) if self.ok and self.binary_size is not None else float("inf")

    def cost(self, objective: Objective) -> float:
        """The ``objective``'s value, or infinity for a failed evaluation (or one that
        lacks what the objective needs)."""
        if not self.ok:
            return float("inf")
        value = {
            Objective.BINARY_SIZE: self.binary_size,
            Objective.TEXT_SIZE: self.text,
            Objective.IR_INSTRUCTIONS: self.ir_instructions,
        }[objective]
        return float(value) if value is not None else float("inf")


class Store:
    """A tuning run's SQLite database (one writer: the process driving the run).

    Args:
        path: The database file; created with its tables if missing.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if read_only:
            if not path.is_file():
                raise InvalidInput(
                    f"{path}: no tuning store (tune.sqlite); run `llm-compiler tune ... --out DIR` first."
                )
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            try:
                self.db.execute("SELECT 1 FROM results LIMIT 1").fetchall()
            except sqlite3.DatabaseError as error:
                self.db.close()
                raise InvalidInput(f"{path} is not a tuning store: {error}.") from error
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            enable_wal(self.db)
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            if "evaluations" not in self._columns("jobs"):  # written before jobs counted evaluations
                self.db.execute("ALTER TABLE jobs ADD COLUMN evaluations INTEGER NOT NULL DEFAULT 0")
            if "validated" not in self._columns("results"):  # written before results said so
                self.db.execute("ALTER TABLE results ADD COLUMN validated INTEGER")
        # What a store opened read-only may lack, having been written by an earlier version.
        self._keeps_units = "ir" in self._columns("units")
        self._flags_validated = "validated" in self._columns("results")
        if "ir_instructions" in self._columns("ir_counts"):
            self._ir_count_column = "COALESCE(m.ir_instructions, c.ir_instructions)"
            self._ir_counts_join = "LEFT JOIN ir_counts c ON e.output_hash = c.output_hash"
        else:
            self._ir_count_column, self._ir_counts_join = "m.ir_instructions", ""

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}

    def close(self) -> None:
        self.db.close()

    # Settings ----------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """The run's recorded settings (empty for a new store)."""
        return {key: json.loads(value) for key, value in self.db.execute("SELECT key, value FROM meta")}

    def check_meta(self, settings: dict[str, Any], *, resume: bool) -> None:
        """Records the run's settings, or checks them against a run being resumed.

        Raises:
            InvalidInput: The store holds a run and ``resume`` is false, or its settings
                differ from ``settings``.
        """
        stored = self.meta()
        if stored and not resume:
            raise InvalidInput(
                f"{self.path} already holds a tuning run. Continue it with --resume, or choose "
                "another --store (or --out) for a new run."
            )
        if stored:
            # A setting named only when not its default (objective, proposer...) differs
            # when it is missing on one side.
            differing = {
                k: (stored.get(k), settings.get(k))
                for k in {*settings, *stored}
                if stored.get(k) != settings.get(k)
            }
            differing = dict(sorted(differing.items()))
            if differing:
                shown = ", ".join(f"{k}: stored {a!r}, now {b!r}" for k, (a, b) in differing.items())
                raise InvalidInput(f"Cannot resume {self.path} with other settings ({shown}).")
            return
        with self.db:
            self.db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in settings.items()]
            )

    # Programs ----------------------------------------------------------------------

    def add_program(
        self,
        program_id: str,
        name: str,
        source: str | None,
        status: str,
        detail: str = "",
        ir: str | None = None,
    ) -> None:
        """Records a program; ``ir`` (its unoptimized IR, kept compressed) lets training and
        replay read the unit back without running the front end again."""
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO programs VALUES (?, ?, ?, ?, ?)",
                (program_id, name, source, status, detail),
            )
            if ir is not None:
                self.db.execute(
                    "INSERT OR REPLACE INTO units VALUES (?, ?)", (program_id, zlib.compress(ir.encode(), 6))
                )

    def program_ir(self, program_id: str) -> str | None:
        """The unoptimized IR the run tuned (None for stores written before units were kept)."""
        if not self._keeps_units:
            return None
        row = self.db.execute("SELECT ir FROM units WHERE program_id = ?", (program_id,)).fetchone()
        return None if row is None else zlib.decompress(row[0]).decode()

    def programs(self) -> list[dict[str, Any]]:
        cursor = self.db.execute(
            "SELECT program_id, name, source, status, detail FROM programs ORDER BY name"
        )
        return [
            dict(zip(("program_id", "name", "source", "status", "detail"), row, strict=True))
            for row in cursor
        ]

    # Evaluations --------------------------------------------------------------------

    def record(self, rows: Iterable[EvaluationRow], llvm_version: str, job: str | None = None) -> None:
        """Writes evaluations (ignoring ones already stored) and marks ``job`` done, atomically."""
        rows = list(rows)
        with self.db:
            for row in rows:
                if row.ok and row.output_hash is not None and row.binary_size is not None:
                    self.db.execute(
                        "INSERT OR IGNORE INTO measurements VALUES (?, ?, ?, ?, ?)",
                        (row.output_hash, row.binary_size, row.text, row.data, row.ir_instructions),
                    )
                elif row.ok and row.output_hash is not None:
                    self.db.execute(
                        "INSERT OR IGNORE INTO ir_counts VALUES (?, ?)",
                        (row.output_hash, row.ir_instructions),
                    )
                self.db.execute(
                    "INSERT OR IGNORE INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        row.program_id,
                        row.pipeline,
                        row.mode,
                        llvm_version,
                        row.outcome,
                        row.output_hash,
                        row.seconds,
                        row.detail,
                        row.phase,
                    ),
                )
            if job is not None:
                self.db.execute("INSERT OR IGNORE INTO jobs VALUES (?, ?)", (job, len(rows)))

    def evaluations(self, program_id: str, llvm_version: str) -> dict[tuple[str, str], EvaluationRow]:
        """All stored evaluations of a program, keyed by (pipeline, mode)."""
        cursor = self.db.execute(
            f"""SELECT e.pipeline, e.mode, e.outcome, m.binary_size, m.text, m.data,
                      {self._ir_count_column}, e.output_hash, e.seconds, e.detail, e.phase
               FROM evaluations e LEFT JOIN measurements m ON e.output_hash = m.output_hash
               {self._ir_counts_join}
               WHERE e.program_id = ? AND e.llvm_version = ?""",
            (program_id, llvm_version),
        )
        rows = {}
        for pipeline, mode, outcome, size, text, data, count, digest, seconds, detail, phase in cursor:
            rows[(pipeline, mode)] = EvaluationRow(
                program_id=program_id,
                pipeline=pipeline,
                mode=mode,
                outcome=outcome,
                binary_size=size,
                text=text,
                data=data,
                ir_instructions=count,
                output_hash=digest,
                seconds=seconds,
                detail=detail,
                phase=phase,
            )
        return rows

    def iter_evaluations(self) -> Iterator[dict[str, Any]]:
        """Every evaluation joined with its measurement, for export."""
        cursor = self.db.execute(
            f"""SELECT e.program_id, p.name, e.pipeline, e.mode, e.llvm_version, e.outcome,
                      m.binary_size, m.text, m.data, {self._ir_count_column}, e.output_hash,
                      e.seconds, e.detail, e.phase
               FROM evaluations e LEFT JOIN measurements m ON e.output_hash = m.output_hash
               {self._ir_counts_join}
               LEFT JOIN programs p ON p.program_id = e.program_id
               ORDER BY p.name, e.phase, e.pipeline, e.mode"""
        )
        names = (
            "program_id", "program", "pipeline", "mode", "llvm_version", "outcome", "binary_size",
            "text", "data", "ir_instructions", "output_hash", "seconds", "detail", "phase",
        )  # fmt: skip
        for row in cursor:
            yield dict(zip(names, row, strict=True))

    def evaluations_made(self) -> tuple[int, int]:
        """(evaluations the jobs made, evaluations stored): the first exceeds the second
        by the evaluations that were made again although already stored."""
        (made,) = self.db.execute("SELECT COALESCE(SUM(evaluations), 0) FROM jobs").fetchone()
        (stored,) = self.db.execute("SELECT COUNT(*) FROM evaluations").fetchone()
        return int(made), int(stored)

    # Jobs and results ------------------------------------------------------------------

    def job_done(self, job: str) -> bool:
        return self.db.execute("SELECT 1 FROM jobs WHERE job = ?", (job,)).fetchone() is not None

    def set_result(
        self,
        program_id: str,
        phase: str,
        pipeline: str,
        size: int,
        detail: str = "",
        validated: bool | None = None,
    ) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO results "
                "(program_id, phase, pipeline, binary_size, detail, validated) VALUES (?, ?, ?, ?, ?, ?)",
                (program_id, phase, pipeline, size, detail, None if validated is None else int(validated)),
            )

    def result(self, program_id: str, phase: str) -> tuple[str, int, str] | None:
        row = self.db.execute(
            "SELECT pipeline, binary_size, detail FROM results WHERE program_id = ? AND phase = ?",
            (program_id, phase),
        ).fetchone()
        return None if row is None else (row[0], int(row[1]), row[2])

    def final_results(self) -> list[FinalResult]:
        """Each program's kept list, as the run's validation phase decided it, by name."""
        flag = "r.validated" if self._flags_validated else "NULL"
        cursor = self.db.execute(
            f"""SELECT r.program_id, COALESCE(p.name, r.program_id), r.pipeline, r.binary_size,
                       r.detail, {flag}
                FROM results r LEFT JOIN programs p ON p.program_id = r.program_id
                WHERE r.phase = 'final' ORDER BY 2"""
        )
        results = []
        for program_id, name, pipeline, size, detail, validated in cursor:
            try:
                record = json.loads(detail)
            except json.JSONDecodeError:
                record = {}
            verdict = str(record.get("validation", "")) if isinstance(record, dict) else ""
            if validated is None:  # a store written before the flag: its validation note says it
                validated = not verdict.startswith("unchecked")
            results.append(FinalResult(program_id, name, pipeline, int(size), verdict, bool(validated)))
        return results


@dataclass(frozen=True)
class FinalResult:
    """A program's kept list in a tuning run.

    Attributes:
        program_id: The program's stable id. name: Its name.
        pipeline: The kept list (``default<Oz>`` when none beat it or passed).
        binary_size: Its size.
        validation: What validation said (the checks passed, or why -Oz was kept).
        validated: Whether the list passed validation (False when it was turned off).
    """

    program_id: str
    name: str
    pipeline: str
    binary_size: int
    validation: str
    validated: bool
