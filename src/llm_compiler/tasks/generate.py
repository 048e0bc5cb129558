"""Generating a task dataset: programs in, samples out, streaming, resumable, parallel.

:func:`generate` reads programs lazily, sends one job per program to an executor
(this process, a local process pool, or Dask; see
:mod:`llm_compiler.core.executors`) a window at a time, and writes each
program's samples as its job completes (:class:`~llm_compiler.tasks.dataset.DatasetWriter`).
Memory stays constant in the number of programs; samples are written in the
programs' order whatever the executor, and an interrupted run continues with
``resume=True``, skipping finished programs. Jobs are pure functions of the settings
and the program, so every executor, and every resumed run, makes the same samples.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import process_compiler
from llm_compiler.core.executors import Executor, Job
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.corpus.tokens import TokenCounter, get_token_counter
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.tasks.dataset import DatasetWriter, GenerationReport
from llm_compiler.tasks.disassembly import disassembly_samples
from llm_compiler.tasks.emulation import emulation_samples
from llm_compiler.tasks.flag_tuning import TuningLabel, flag_tuning_samples, read_labels
from llm_compiler.tasks.samples import TASKS, DataSettings, SampleContext


@dataclass
class ProgramOutput:
    """What a job returns: a program's samples, dropped lists, or why it failed."""

    key: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    error: str = ""


_COUNTERS: dict[str | None, TokenCounter] = {}
_LABELS: dict[str, dict[str, TuningLabel]] = {}


def _counter(settings: DataSettings) -> TokenCounter:
    if settings.tokenizer not in _COUNTERS:
        _COUNTERS[settings.tokenizer] = get_token_counter(settings.tokenizer)
    return _COUNTERS[settings.tokenizer]


def _labels(settings: DataSettings) -> dict[str, TuningLabel]:
    if settings.tuning is None:
        raise InvalidInput(
            "flag tuning samples need a tuning run: --tuning DIR (llm-compiler tune --out DIR)."
        )
    if settings.tuning not in _LABELS:
        _LABELS[settings.tuning] = read_labels(Path(settings.tuning))
    return _LABELS[settings.tuning]


def sample_job(settings: DataSettings, record: ProgramSource) -> ProgramOutput:
    """Makes the samples of one program (runs on a worker)."""
    output = ProgramOutput(record.key())
    try:
        compiler = process_compiler(settings)
        program = record.load(compiler)
        context = SampleContext(settings, record, program, _counter(settings), compiler.llvm_version)
        if settings.task == "emulation":
            output.samples, output.dropped = emulation_samples(compiler, program, context)
        elif settings.task == "flag-tuning":
            label = _labels(settings).get(program.id)
            output.samples, output.dropped = flag_tuning_samples(compiler, program, context, label)
        else:
            output.samples, output.dropped = disassembly_samples(compiler, program, context)
    except LlmCompilerError as error:
        output.error = " ".join(str(error).split())[:500] or type(error).__name__
    return output


def generate(
    settings: DataSettings,
    programs: Iterable[ProgramSource],
    out: Path,
    executor: Executor,
    *,
    resume: bool = False,
    shard_size: int = 1000,
    window: int = 8,
    on_program: Callable[[ProgramOutput], None] | None = None,
) -> GenerationReport:
    """Generates a task dataset into ``out`` (see the module docstring).

    Args:
        settings: Task and generation settings.
        programs: The programs (read lazily).
        out: The dataset folder.
        executor: Where jobs run.
        resume: Continue a dataset in ``out``.
        shard_size: Samples per shard.
        window: Jobs in flight at once.
        on_program: Called after each program (for progress).

    Raises:
        InvalidInput: Unknown task, or ``out`` holds a dataset and ``resume`` is off.
    """
    if settings.task not in TASKS:
        raise InvalidInput(f"unknown task {settings.task!r}; choose one of {', '.join(TASKS)}.")
    if settings.task == "flag-tuning":
        _labels(settings)  # fail early, before any job, when the tuning run is missing
    writer = DatasetWriter(out, settings.task, settings.to_json(), shard_size=shard_size, resume=resume)
    started = time.monotonic()
    base_seconds = writer.report.seconds
    pending: Iterator[ProgramSource] = (record for record in programs if record.key() not in writer.done)
    try:
        while True:
            batch = list(itertools.islice(pending, window))
            if not batch:
                break
            jobs: list[Job] = [(sample_job, (settings, record)) for record in batch]
            # Written in the programs' order, whatever order jobs finish in, so that
            # every executor and every --jobs makes the same files.
            order = [record.key() for record in batch]
            finished: dict[str, list[ProgramOutput]] = {}
            for output in executor.run(jobs):
                finished.setdefault(output.key, []).append(output)
                if on_program is not None:
                    on_program(output)
                while order and finished.get(order[0]):
                    _record(writer, finished[order.pop(0)].pop(0))
            writer.report.seconds = base_seconds + time.monotonic() - started
            writer.save_report()
    finally:
        writer.report.seconds = base_seconds + time.monotonic() - started
        writer.save_report()
    writer.write_parquet()
    return writer.report


def _record(writer: DatasetWriter, output: ProgramOutput) -> None:
    report = writer.report
    if output.error:
        report.programs_failed += 1
        if len(report.failed) < 1000:
            report.failed.append({"program": output.key, "reason": output.error})
    else:
        report.programs += 1
    report.dropped.update(output.dropped)
    writer.write_program(output.key, output.samples)
