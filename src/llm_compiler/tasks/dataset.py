"""Writing task datasets: sharded JSONL per split, resumable, with a generation report.

A dataset folder holds::

    <split>/shard-00000.jsonl ...   samples, a JSON object per line (fields: docs/datasets.md)
    <split>/shard-00000.parquet     the same shards as Parquet, when pyarrow is installed
    done.jsonl                      the programs finished, one per line (resume state)
    settings.json                   the task and settings a resumed run must share
    report.json                     counts: programs, samples, dropped lists and why

Samples of a program are written together, flushed, and only then is the program
recorded as done. On resume, samples of programs not recorded as done (an
interrupted write) are removed from the open shards before generation continues, so
a killed run loses at most the programs in flight and never duplicates a sample.
The folder is a :class:`~llm_compiler.files.RunDir` (the identity check and the
records of ``optimize`` and ``evaluate``).
Splits live in their own folders, so ``datasets.load_dataset("json",
data_files={"train": "DIR/train/*.jsonl", ...})`` loads them as they are.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.corpus.store import SPLITS
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.files import RunDir, atomic_write_text, have_pyarrow, jsonl_to_parquet

DEFAULT_SHARD_SIZE = 1000


@dataclass
class GenerationReport:
    """What a generation run did, per reason (kept across resumed runs)."""

    task: str
    programs: int = 0
    programs_failed: int = 0
    samples: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "programs": self.programs,
            "programs_failed": self.programs_failed,
            "samples": dict(self.samples),
            "samples_total": sum(self.samples.values()),
            "dropped": dict(self.dropped),
            "settings": self.settings,
            "seconds": round(self.seconds, 2),
            "failed": self.failed,
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> GenerationReport:
        return cls(
            task=record["task"],
            programs=record.get("programs", 0),
            programs_failed=record.get("programs_failed", 0),
            samples=Counter(record.get("samples", {})),
            dropped=Counter(record.get("dropped", {})),
            settings=record.get("settings", {}),
            seconds=record.get("seconds", 0.0),
            failed=record.get("failed", []),
        )


class DatasetWriter:
    """Appends samples to sharded JSONL files and keeps the resume state.

    Args:
        root: The dataset folder.
        task: The task name (recorded in the report).
        settings: Generation settings; a resumed run must use the same ones.
        shard_size: Samples per shard file.
        resume: Continue a run in ``root``; otherwise ``root`` must hold no dataset.

    Raises:
        InvalidInput: ``root`` holds a dataset and ``resume`` is off, or the settings differ.
    """

    def __init__(
        self,
        root: Path,
        task: str,
        settings: dict[str, Any],
        *,
        shard_size: int = DEFAULT_SHARD_SIZE,
        resume: bool = False,
    ) -> None:
        self.root = Path(root)
        self.shard_size = shard_size
        self.report_path = self.root / "report.json"
        if self.report_path.is_file() and not resume:
            raise InvalidInput(
                f"{self.root} already holds a dataset. Use --resume to continue it, or another --out."
            )
        # The programs done are the run's records; its identity is the task and settings.
        self.run = RunDir(
            self.root, {"task": task, "settings": settings}, resume=resume, records="done.jsonl"
        )
        self.done_path = self.run.records_path
        self.report = GenerationReport(task, settings=settings)
        if self.report_path.is_file():
            previous = GenerationReport.from_json(json.loads(self.report_path.read_text()))
            if previous.settings != settings or previous.task != task:
                raise InvalidInput(
                    f"{self.root} was generated with other settings ({previous.task}, "
                    f"{json.dumps(previous.settings, sort_keys=True)}); resume with the same ones."
                )
            self.report = previous
        self.done: set[str] = {record["program"] for record in self.run.records() if "program" in record}
        self._counts: dict[str, int] = {}
        self._shards: dict[str, int] = {}
        for split in SPLITS:
            self._recover(split)

    def _shard_path(self, split: str, number: int) -> Path:
        return self.root / split / f"shard-{number:05d}.jsonl"

    def _recover(self, split: str) -> None:
        """Finds the open shard of a split and drops samples of unfinished programs."""
        shards = sorted((self.root / split).glob("shard-*.jsonl"))
        if not shards:
            self._shards[split], self._counts[split] = 0, 0
            return
        last = shards[-1]
        kept = []
        for line in last.read_text().splitlines(keepends=True):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if line.endswith("\n") and record.get("program_key") in self.done:
                kept.append(line)
        atomic_write_text(last, "".join(kept))  # killed here, the shard is as it was
        self._shards[split] = int(last.stem.split("-")[1])
        self._counts[split] = len(kept)

    def write_program(self, key: str, samples: list[dict[str, Any]]) -> None:
        """Writes one program's samples, then records the program as done."""
        by_split: dict[str, list[dict[str, Any]]] = {}
        for sample in samples:
            if sample["split"] not in SPLITS:
                raise LlmCompilerError(f"sample with unknown split {sample['split']!r}")
            by_split.setdefault(sample["split"], []).append({**sample, "program_key": key})
        for split, records in by_split.items():
            for record in records:
                if self._counts[split] >= self.shard_size:
                    self._shards[split] += 1
                    self._counts[split] = 0
                path = self._shard_path(split, self._shards[split])
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as shard:
                    shard.write(json.dumps(record, sort_keys=True) + "\n")
                self._counts[split] += 1
                self.report.samples[split] += 1
        self.run.append({"program": key})
        self.done.add(key)

    def save_report(self) -> None:
        """Writes report.json (atomically)."""
        atomic_write_text(
            self.report_path, json.dumps(self.report.to_json(), indent=2, sort_keys=True) + "\n"
        )

    def write_parquet(self) -> int:
        """Writes a Parquet file next to each JSONL shard; returns how many (0 without pyarrow)."""
        if not have_pyarrow():
            return 0
        written = 0
        for shard in sorted(self.root.glob("*/shard-*.jsonl")):
            if shard.stat().st_size == 0:
                continue
            if jsonl_to_parquet(shard):
                written += 1
        return written


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a JSONL shard (or of every shard under a dataset folder)."""
    files = sorted(path.glob("*/shard-*.jsonl")) if path.is_dir() else [path]
    samples = []
    for file in files:
        for line in file.read_text().splitlines():
            if line.strip():
                samples.append(json.loads(line))
    return samples
