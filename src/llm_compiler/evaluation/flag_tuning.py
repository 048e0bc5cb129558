"""Flag tuning evaluated as the paper does: any system, any program set, one row per unit.

A **system** proposes pass lists for units; the harness measures and validates what
it proposes with the same compiler and gate, whoever it is:

* ``oz``: -Oz itself (the baseline every figure is relative to);
* ``o3`` (``default<O3>``), or ``passes:PIPELINE``: one fixed list for every unit;
* ``tune:N``: the autotuner (:mod:`llm_compiler.autotune`) at a budget of N lists per
  unit, with minimization, broadcast and validation;
* a model spec (``hf:``, ``vllm:``, ``gguf:``, ``openai:``, ``replay:``): the model's
  answers through :class:`~llm_compiler.models.optimize.ModelOptimizer`;
* ``builtin`` (``builtin:k=N``, ``builtin:max=N``, ``builtin:PATH,k=N``): the built-in
  predictor's first lists (those its gauge finds worth measuring, at most 10 or N; with
  ``k=N`` exactly its top N); ``common:N``: its N candidates most often kept in training, the same for
  every unit (no learning); ``random:N``: N random lists as random search draws them.
  Each is measured beside -Oz and validated as a model's answers are
  (:class:`~llm_compiler.models.proposed.ProposerOptimizer`);
* ``gcc-os`` and ``gcc-os-lto``: GCC's size for the same unit (``gcc -Os``, and
  ``gcc -Os -flto`` through an incremental link), the reference a user could switch to
  (:mod:`llm_compiler.toolchain.gcc`). A source file is compiled with its front-end
  flags translated; a corpus unit from the GCC-preprocessed source the corpus keeps.
  Its row's ``size``, ``zero_shot_size`` and ``unvalidated_size`` are GCC's size (there
  is nothing of ours to validate: ``validated`` is False, ``outcome`` ``gcc``), so its
  geometric mean against -Oz is "gcc -Os vs clang -Oz", negative where GCC is larger.

Each (unit, system) gives a :class:`~llm_compiler.evaluation.results.Row`, or a
:class:`~llm_compiler.evaluation.results.Failure` for a unit a system cannot be run on
(:mod:`llm_compiler.evaluation.results`); :func:`~llm_compiler.evaluation.figures.summarize`
turns rows into the figures per system and per package (:mod:`llm_compiler.evaluation.figures`).
"""

from __future__ import annotations

import functools
import itertools
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import Executor, InlineExecutor
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput, InvalidPassList, LlmCompilerError, reason_of
from llm_compiler.evaluation.frames import SUFFIX as FRAMES_SUFFIX
from llm_compiler.evaluation.frames import binary_or_text, with_frames
from llm_compiler.evaluation.results import Failure, Row
from llm_compiler.models.base import Model, ModelError
from llm_compiler.models.optimize import ListOptimizer, ModelOptimizer, OptimizeSettings, UnitResult
from llm_compiler.models.proposed import proposer_optimizer
from llm_compiler.models.registry import BACKENDS
from llm_compiler.selection import Candidate, Gate, Policy, Selector, Verdict
from llm_compiler.selection.registry import check_spec, is_proposer_spec, unknown_kind
from llm_compiler.toolchain.elf import berkeley_size, section_sizes

FIXED = {"oz": OZ_PIPELINE, "o3": "default<O3>", "o2": "default<O2>", "os": "default<Os>"}
#: GCC's systems: whether each runs GCC's link-time optimizer, and the row's pipeline.
GCC_SYSTEMS = {"gcc-os": (False, "gcc -Os"), "gcc-os-lto": (True, "gcc -Os -flto")}


def system_kind(name: str) -> str:
    """``fixed``, ``gcc``, ``tune``, ``lists`` or ``model`` for a system name.

    Raises:
        InvalidInput: Not a system this harness knows.
    """
    if name.endswith(FRAMES_SUFFIX):
        base = name.removesuffix(FRAMES_SUFFIX)
        if base in GCC_SYSTEMS or base.endswith(FRAMES_SUFFIX):
            raise InvalidInput(f"Unknown system {name!r}: {FRAMES_SUFFIX} applies to systems of pass lists.")
        return system_kind(base)
    if name in FIXED or name.startswith("passes:"):
        return "fixed"
    if name in GCC_SYSTEMS:
        return "gcc"
    kind = name.partition(":")[0].partition(",")[0]
    try:
        if kind == "tune":
            if name[5:].isdigit() and int(name[5:]) > 0:
                return "tune"
            raise InvalidInput("tune needs a budget of lists per unit above 0, e.g. tune:100.")
        if is_proposer_spec(name):
            check_spec(name)
            return "lists"
        if kind in BACKENDS:
            return "model"
        error = unknown_kind(name, (*FIXED, *GCC_SYSTEMS, "passes", "tune", *BACKENDS), what="system")
    except InvalidInput as invalid:
        error = InvalidInput(f"Unknown system {name!r}: {invalid}")
    raise InvalidInput(
        f"{error} Systems: oz, o3, o2, os, passes:PIPELINE, gcc-os, gcc-os-lto (GCC's size, gcc -Os "
        "and gcc -Os -flto), tune:N (the autotuner with a budget of N "
        "lists per unit), builtin[:k=N] (the built-in predictor), common:N, random:N, local:N, or a "
        f"model spec ({', '.join(f'{s}:...' for s in BACKENDS)})."
    )


@dataclass
class FlagTuningHarness:
    """Runs systems over units with one compiler and one gate.

    Args:
        compiler: Measures every list.
        gate: Validates every list before it counts as an improvement.
        tune_settings: Settings of ``tune:N`` systems (the budget is the N).
        optimize_settings: How models are asked.
        load_model: Makes a model from its spec (the CLI passes its backend options).
        executor: Where the autotuner's jobs run.
        workdir: Where the autotuner keeps its stores (for resuming); temporary if None.
        jobs: Candidates measured at once for models.
    """

    compiler: Compiler
    gate: Gate
    tune_settings: TuneSettings
    optimize_settings: OptimizeSettings
    load_model: Callable[[str], Model]
    executor: Executor | None = None
    workdir: Path | None = None
    jobs: int = 1
    #: Units through the front end, by name: each is loaded once for all systems.
    programs: dict[str, Program] = field(default_factory=dict, repr=False)
    #: The rows made so far by (system, unit): ``SYSTEM+frames`` starts from them.
    rows: dict[tuple[str, str], Row] = field(default_factory=dict, repr=False)

    def run(self, system: str, sources: Sequence[ProgramSource]) -> Iterator[Row | Failure]:
        """The rows of ``system`` on ``sources``, as each is done (the autotuner's at its end),
        or a :class:`Failure` for a unit it cannot be run on.

        Raises:
            InvalidInput: ``system`` is unknown, or its pipeline is not a valid pass list;
                a GCC system under an objective that needs no object.
            ModelError: A model's backend failed.
        """
        if system.endswith(FRAMES_SUFFIX):
            system_kind(system)
            yield from self._with_frames(system, sources)
            return
        for row in self._run(system, sources):
            if isinstance(row, Row):
                self.rows[(system, row.unit)] = row
            yield row

    def _run(self, system: str, sources: Sequence[ProgramSource]) -> Iterator[Row | Failure]:
        kind = system_kind(system)
        if kind in ("fixed", "gcc"):
            if kind == "fixed":
                self._fixed_pipeline(system)  # a bad pipeline is the system's error, not each unit's
            elif not self.tune_settings.objective.needs_object:
                raise InvalidInput(
                    f"system {system!r} measures GCC's objects: it needs an objective in bytes "
                    f"(--objective binary-size or text-size), not {self.tune_settings.objective.value}."
                )
            for source in sources:
                try:
                    row: Row | Failure = (
                        self._fixed(system, source) if kind == "fixed" else self._gcc(system, source)
                    )
                except LlmCompilerError as error:
                    row = _failure(system, source, error)
                yield row
        elif kind == "tune":
            by_name = {source.name: source for source in sources}
            for row in self._tune(system, sources):
                yield self._with_sections(row, by_name.get(row.unit))
        elif kind == "lists":
            yield from map(self._with_sections, self._optimized(system, self._lists(system), sources))
        else:
            with self.load_model(system) as model:
                optimizer = ModelOptimizer(
                    self.compiler, model, self.gate, self.optimize_settings, self.jobs, self.policy
                )
                yield from map(self._with_sections, self._optimized(system, optimizer, sources))

    def _with_frames(self, system: str, sources: Sequence[ProgramSource]) -> Iterator[Row | Failure]:
        """The rows of ``system`` without its ``+frames``, with the frame-pointer choice
        applied (:mod:`llm_compiler.evaluation.frames`): those this harness made already
        (``tune:100`` before ``tune:100+frames``), the others made now."""
        if not self.tune_settings.objective.needs_object:
            raise InvalidInput(
                f"system {system!r} compares objects: it needs an objective in bytes "
                f"(--objective binary-size or text-size), not {self.tune_settings.objective.value}."
            )
        by_name = {source.name: source for source in sources}
        size = binary_or_text(self.tune_settings.objective.value)
        base = system.removesuffix(FRAMES_SUFFIX)
        done = [self.rows[(base, source.name)] for source in sources if (base, source.name) in self.rows]
        rest = [source for source in sources if (base, source.name) not in self.rows]
        for row in itertools.chain(done, self.run(base, rest) if rest else ()):
            if isinstance(row, Row):
                try:
                    program = self.programs.get(row.unit) or self._load(by_name[row.unit])
                except (KeyError, LlmCompilerError):
                    yield replace(row, system=system)
                    continue
                row = with_frames(row, program, self.compiler, self.selector, size)
            yield replace(row, system=system)

    def _with_sections(self, row: Row | Failure, source: ProgramSource | None = None) -> Row | Failure:
        """``row`` with the section sizes of its chosen pipeline's object (one lowering
        of the kept IR, unless the compiler's object cache holds it); unchanged where
        there is no object to read (another objective's unit, a non-ELF object)."""
        if isinstance(row, Failure) or row.sections is not None:
            return row
        try:
            program = self.programs.get(row.unit) or (self._load(source) if source else None)
            if program is None:
                return row
            blob = self.compiler.object_code(program, self.compiler.passes(row.pipeline))[0]
            return replace(row, sections=section_sizes(blob))
        except LlmCompilerError:
            return row

    def _gcc(self, system: str, source: ProgramSource) -> Row:
        """GCC's row for a unit: -Oz beside GCC's size and sections (module docstring)."""
        start = time.monotonic()
        lto, pipeline = GCC_SYSTEMS[system]
        gcc = source.gcc_source()  # a unit without one fails before anything is compiled
        program = self._load(source)
        oz = self.selector.oz_size(program)
        objective = self.tune_settings.objective
        unoptimized = self.compiler.value(program, None, objective)[0]
        blob = gcc.compile(lto=lto, timeout=self.compiler.timeout)
        measured = berkeley_size(blob)
        size = measured.text if objective.value == "text-size" else measured.binary_size
        return Row(
            source.name,
            _package(source),
            system,
            oz,
            unoptimized,
            zero_shot_size=size,
            size=size,
            validated=False,
            unvalidated_size=size,
            outcome="gcc",
            pipeline=pipeline,
            compiles=1,
            seconds=time.monotonic() - start,
            sections=section_sizes(blob),
        )

    def _optimized(
        self, system: str, optimizer: ListOptimizer, sources: Sequence[ProgramSource]
    ) -> Iterator[Row | Failure]:
        """``optimizer`` on each unit, a batch of proposals at a time; a unit that cannot be
        loaded, proposed for or decided on is a :class:`Failure` and the others go on."""
        size = max(1, optimizer.batch_size)
        for start in range(0, len(sources), size):
            batch: list[tuple[ProgramSource, Program]] = []
            for source in sources[start : start + size]:
                try:
                    batch.append((source, self._load(source)))
                except LlmCompilerError as error:
                    yield _failure(system, source, error)
            try:
                proposals = optimizer.propose([program for _, program in batch])
            except ModelError:
                raise
            except LlmCompilerError:  # which unit it stopped on is found one unit at a time
                proposals = []
            for index, (source, program) in enumerate(batch):
                try:
                    proposal = proposals[index] if proposals else optimizer.propose([program])[0]
                    result = optimizer.decide(source.name, program, proposal)
                except ModelError:
                    raise
                except LlmCompilerError as error:
                    yield _failure(system, source, error)
                    continue
                yield self._model_row(system, source, result)

    def _lists(self, system: str) -> ListOptimizer:
        settings = self.tune_settings
        return proposer_optimizer(
            self.compiler,
            self.gate,
            system,
            self.jobs,
            seed=settings.seed,
            max_length=settings.max_length,
            pass_set=settings.pass_set,
            objective=settings.objective,
        )

    @functools.cached_property
    def selector(self) -> Selector:
        """The selection layer fixed lists go through (made once)."""
        return Selector(self.compiler, self.gate, self.policy)

    @property
    def policy(self) -> Policy:
        """How every system's lists are chosen: ``jobs`` at once, in the run's objective."""
        return Policy(jobs=self.jobs, objective=self.tune_settings.objective)

    def _load(self, source: ProgramSource) -> Program:
        program = self.programs.get(source.name)
        if program is None:
            program = self.programs[source.name] = source.load(self.compiler)
        return program

    def _fixed_pipeline(self, system: str) -> str:
        """The pipeline of a fixed system.

        Raises:
            InvalidInput: ``passes:PIPELINE`` is not a valid pass list.
        """
        pipeline = FIXED.get(system) or system.removeprefix("passes:")
        if pipeline != OZ_PIPELINE:
            try:
                self.compiler.passes(pipeline)
            except InvalidPassList as error:
                raise InvalidInput(f"system {system!r}: {error}") from error
        return pipeline

    def _fixed(self, system: str, source: ProgramSource) -> Row:
        start = time.monotonic()
        program = self._load(source)
        oz = self.selector.oz_size(program)
        unoptimized = self.compiler.value(program, None, self.tune_settings.objective)[0]
        pipeline = self._fixed_pipeline(system)
        common: dict[str, Any] = {
            "unit": source.name,
            "package": _package(source),
            "system": system,
            "oz_size": oz,
            "unoptimized_size": unoptimized,
        }
        if pipeline == OZ_PIPELINE:
            return self._sections_of(
                program,
                Row(
                    **common,
                    zero_shot_size=oz,
                    size=oz,
                    validated=True,
                    unvalidated_size=oz,
                    outcome="oz",
                    pipeline=OZ_PIPELINE,
                    compiles=2,
                    seconds=time.monotonic() - start,
                ),
            )
        run = self.compiler.passes(pipeline).pipeline
        selection = self.selector.select(program, [Candidate(pipeline=pipeline, run=run)], oz_size=oz)
        first = selection.candidates[0]
        size = first.binary_size
        if size is None:
            outcome = first.verdict.value
        elif selection.fallback is None:
            outcome = "improved"
        else:
            outcome = "oz" if first.verdict is Verdict.NOT_SMALLER else selection.fallback.value
        first_passed = first.verdict is Verdict.VALIDATED
        return self._sections_of(
            program,
            Row(
                **common,
                zero_shot_size=size if size is not None and (size >= oz or first_passed) else oz,
                size=selection.binary_size,
                validated=selection.validated,
                unvalidated_size=size,
                outcome=outcome,
                pipeline=selection.chosen,
                compiles=2 + len({c.run for c in selection.candidates if c.run}),
                seconds=time.monotonic() - start,
            ),
        )

    def _sections_of(self, program: Program, row: Row) -> Row:
        self.programs.setdefault(row.unit, program)
        found = self._with_sections(row)
        assert isinstance(found, Row)
        return found

    def _tune(self, system: str, sources: Sequence[ProgramSource]) -> Iterator[Row | Failure]:
        budget = int(system.removeprefix("tune:"))
        settings = replace(self.tune_settings, budget=budget)
        scratch = None
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            store_path = self.workdir / f"tune-{budget}.sqlite"
        else:
            scratch = tempfile.TemporaryDirectory(prefix="llm-compiler-evaluate-")
            store_path = Path(scratch.name) / "tune.sqlite"
        store = Store(store_path)
        start = time.monotonic()
        try:
            store.check_meta({**settings.identity(), "llvm_version": self.compiler.llvm_version}, resume=True)
            loaded = {s.key(): self.programs[s.name] for s in sources if s.name in self.programs}
            report = Tuner(settings, store, self.executor or InlineExecutor(), self.compiler).run(
                list(sources), loaded
            )
        finally:
            store.close()
            if scratch is not None:
                scratch.cleanup()
        seconds = (time.monotonic() - start) / max(1, len(sources))
        by_name = {result.program: result for result in report.programs}
        for source in sources:
            # A unit that did not load is recorded under its path.
            result = by_name.get(source.name) or by_name.get(str(source.path))
            if result is None or not result.ok:
                detail = (result.detail or result.status) if result else "not tuned"
                error = InvalidInput(f"{source.name}: the autotuner could not tune it: {detail}")
                yield _failure(system, source, error)
                continue
            found = [s for s in (result.random_size, result.minimized_size, result.broadcast_size) if s > 0]
            improved = result.best_size < result.oz_size
            yield Row(
                source.name,
                _package(source),
                system,
                result.oz_size,
                result.unoptimized_size,
                result.best_size,
                result.best_size,
                True,
                min(found, default=result.best_size),
                "improved" if improved else "oz",
                result.best_pipeline,
                compiles=result.compiles,
                seconds=seconds,
            )

    def _model_row(self, system: str, source: ProgramSource, result: UnitResult) -> Row:
        unoptimized = result.unoptimized_size
        first = result.candidates[0] if result.candidates else None
        zero_shot = result.oz_size
        if first is not None and first.binary_size is not None and first.verdict not in _REJECTED:
            zero_shot = first.binary_size  # validated, or not smaller (a regression counts as it is)
        measured = [c.binary_size for c in result.candidates if c.binary_size is not None]
        return Row(
            source.name,
            _package(source),
            system,
            result.oz_size,
            unoptimized,
            zero_shot,
            result.binary_size,
            result.fallback is None,
            min(measured, default=None),
            "improved" if result.fallback is None else result.fallback.value,
            result.chosen,
            first.predicted_before if first else None,
            first.predicted_after if first else None,
            first.binary_size if first else None,
            compiles=1 + len({c.run for c in result.candidates if c.run}),
            seconds=result.seconds,
        )


#: Verdicts that say a list itself may not be kept (its size does not count zero-shot).
_REJECTED = (Verdict.VALIDATION_FAILURE, Verdict.NONDETERMINISTIC, Verdict.SAME_AS_REJECTED)


def _failure(system: str, source: ProgramSource, error: LlmCompilerError) -> Failure:
    return Failure(source.name, _package(source), system, reason_of(error, 2000), exception=error)


def _package(source: ProgramSource) -> str:
    return str(source.provenance.get("package") or Path(source.name).parent.name or "-")
