"""The pass-ordering environment: a Gymnasium ``Env`` over the installed LLVM.

An episode takes one benchmark (:mod:`llm_compiler.gym.benchmarks`), starts from its
unoptimized IR and applies one pipeline element per step; the state after each step is
measured in the chosen observation and reward spaces (:mod:`llm_compiler.gym.spaces`).
Each step runs only its new element, on the module the previous steps left (the
in-process engine's prefix states); instruction-count observations and rewards never
generate code.

Actions (``action_space=``):

* ``paper`` (default): ``Discrete(N)``, the installed LLVM's searchable pass set
  (:mod:`llm_compiler.passes.searchable`), in its order: ``env.action_names[i]`` is the
  element action ``i`` appends;
* ``params``: the same passes and their parameter variants (:mod:`llm_compiler.passes.space`);
* ``nested``: ``Discrete(2N)``: actions ``0..N-1`` append a pass, ``N+i`` appends pass
  ``i`` *inside* the last element's pass manager where the two can share one
  (``function(a)`` then ``function(b)`` -> ``function(a,b)``; else it is appended);
* ``text``: a whole pipeline as text (for language models), parsed by the pass grammar
  and checked against the searchable set before it reaches LLVM; each of its top-level
  elements is applied in turn within one step.

An action LLVM rejects or crashes on ends the episode (``terminated``, the state as it
was, ``info["error"]`` saying why); an action outside the space raises
:class:`~llm_compiler.errors.InvalidInput` (an unknown pass in a text action:
:class:`~llm_compiler.errors.InvalidPassList`), and nothing unparsed reaches ``opt``.

The episode is a replayable :class:`~llm_compiler.gym.record.EpisodeRecord`
(``env.record``): the benchmark's URI, the LLVM version, the pipeline after each step
as ``opt -passes=`` takes it, and every measured size. A state is what one ``opt`` run
per step gives (``opt -passes=a | opt -passes=b | ...``), as CompilerGym applied one
pass at a time; one ``opt -passes=a,b,...`` run gives the same module except in rare
cases where analyses kept between passes matter. :meth:`PassOrderingEnv.validate`
checks the current pipeline as any kept list is checked (a determinism check, then the
gate: the program's link and its own run where it has a ``main``, PassListEval) and
returns a :class:`~llm_compiler.selection.outcomes.Verdict`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput
from llm_compiler.gym.benchmarks import Benchmark, Dataset, datasets, load_benchmark
from llm_compiler.gym.record import EpisodeRecord, StepRecord
from llm_compiler.gym.spaces import (
    TEXT_CHARSET,
    RewardSpace,
    State,
)
from llm_compiler.gym.spaces import (
    observation_space as named_observation,
)
from llm_compiler.gym.spaces import (
    reward_space as named_reward,
)
from llm_compiler.passes.pipeline import MAX_PIPELINE_CHARS, PassList, PassNode, join_nodes, joinable
from llm_compiler.passes.space import widen
from llm_compiler.selection import Selector, Verdict, make_gate

#: The action spaces by name.
ACTION_SPACES = ("paper", "params", "nested", "text")

#: (program id, LLVM version, metric) -> (unoptimized cost, -Oz cost), for the process.
_BASELINES: dict[tuple[str, str, str], tuple[int, int]] = {}


class PassOrderingEnv(gymnasium.Env[Any, Any]):
    """Pass ordering for code size on the installed LLVM (module docstring).

    Args:
        benchmark: The benchmark URI episodes use unless ``reset`` names another; None
            draws one from ``dataset`` at each reset.
        observation_space: An observation space name, or several (a ``Dict`` observation).
        reward_space: A reward space name.
        action_space: ``paper``, ``params``, ``nested`` or ``text``.
        dataset: The dataset resets draw from when no benchmark is named (a name of
            :attr:`datasets`; default ``builtin``).
        datasets: Program-set targets (folders, corpora with ``?split=``) offered as datasets
            besides the built-in ones.
        compiler: The compiler to use (default: one on the LLVM found, the ``auto`` engine).
        render_mode: ``ansi`` for :meth:`render`'s text.

    Raises:
        InvalidInput: An unknown space or dataset name.
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012  # Gymnasium's convention

    def __init__(
        self,
        benchmark: str | None = None,
        observation_space: str | Sequence[str] = "Autophase",
        reward_space: str = "IrInstructionCountOz",
        action_space: str = "paper",
        dataset: str = "builtin",
        datasets: Sequence[str] = (),
        compiler: Compiler | None = None,
        render_mode: str | None = None,
    ) -> None:
        if action_space not in ACTION_SPACES:
            raise InvalidInput(
                f"Unknown action space {action_space!r}; choose one of {', '.join(ACTION_SPACES)}."
            )
        if render_mode not in (None, "ansi"):
            raise InvalidInput(f"render_mode must be 'ansi' or None, not {render_mode!r}.")
        self.render_mode = render_mode
        self._own_compiler = compiler is None
        self.compiler = compiler or Compiler()
        self.observation_names = (
            (observation_space,) if isinstance(observation_space, str) else tuple(observation_space)
        )
        self._observations = tuple(named_observation(name) for name in self.observation_names)
        self.reward_name = reward_space
        self._reward: RewardSpace = named_reward(reward_space)
        self.action_space_name = action_space
        self.action_names = self._action_names(action_space)
        self.action_space = self._action_space(action_space)
        if len(self._observations) == 1:
            self.observation_space = self._observations[0].space
        else:
            self.observation_space = spaces.Dict({o.name: o.space for o in self._observations})
        self._needs = frozenset().union(self._reward.needs, *(o.needs for o in self._observations))
        self._extra_datasets = tuple(datasets)
        self._datasets: dict[str, Dataset] | None = None
        self.dataset_name = dataset
        self.default_benchmark = benchmark
        self.benchmark: Benchmark | None = None
        self._nodes: tuple[PassNode, ...] = ()
        self._state: State | None = None
        self._steps: list[StepRecord] = []
        self._initial: State | None = None
        self._norm = 1

    # Spaces ------------------------------------------------------------------

    def _action_names(self, name: str) -> tuple[str, ...]:
        pass_set = self.compiler.pass_set
        if name == "params":
            pass_set = widen(pass_set, self.compiler.toolchain, "params")
        return pass_set.members

    def _action_space(self, name: str) -> spaces.Space[Any]:
        if name == "text":
            return spaces.Text(MAX_PIPELINE_CHARS, min_length=1, charset=TEXT_CHARSET)
        count = len(self.action_names) * (2 if name == "nested" else 1)
        return spaces.Discrete(count)

    @property
    def datasets(self) -> dict[str, Dataset]:
        """The datasets resets can draw from, by name (:func:`~llm_compiler.gym.benchmarks.datasets`)."""
        if self._datasets is None:
            self._datasets = datasets(self._extra_datasets)
        return self._datasets

    # Episodes ----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Starts an episode on ``options["benchmark"]``, else the constructor's benchmark,
        else one drawn (with the env's seeded generator) from the dataset.

        Raises:
            InvalidInput: The benchmark URI names nothing, or the dataset is unknown.
        """
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - {"benchmark", "dataset"}
        if unknown:
            raise InvalidInput(f"reset takes the options benchmark and dataset, not {sorted(unknown)}.")
        uri = options.get("benchmark") or self.default_benchmark
        if uri is None:
            uri = self._draw(options.get("dataset", self.dataset_name))
        if self.benchmark is None or self.benchmark.uri != uri:
            self.benchmark = load_benchmark(uri, self.compiler)
        self._nodes = ()
        self._steps = []
        self._initial = self._state = self._measure(PassList())
        if self._reward.normalized:
            initial, oz = self.baseline()
            self._norm = max(initial - oz, 1)
        else:
            self._norm = 1
        return self._observe(self._state), self._info()

    def _draw(self, name: str) -> str:
        try:
            dataset = self.datasets[name]
        except KeyError:
            raise InvalidInput(
                f"Unknown dataset {name!r}; choose one of {', '.join(self.datasets)}."
            ) from None
        if dataset.size is None:
            seed = int(self.np_random.integers(0, 1 << 31))
            return f"{dataset.name}:{seed}"
        uris = list(dataset.benchmark_uris())
        if not uris:
            raise InvalidInput(f"The dataset {name!r} holds no benchmark.")
        return uris[int(self.np_random.integers(0, len(uris)))]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Applies ``action`` to the current state.

        Raises:
            InvalidInput: ``action`` is outside the action space (an unknown pass in a text
                action raises :class:`~llm_compiler.errors.InvalidPassList`), or no
                episode was started.
        """
        if self._state is None or self.benchmark is None:
            raise InvalidInput("Call reset() before step().")
        nodes = self._apply(action)
        previous = self._state
        try:
            state = self._measure(PassList(nodes))
        except (CommandFailed, CompileTimeout) as error:
            info = self._info()
            info["error"] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
            return self._observe(previous), 0.0, True, False, info
        self._nodes, self._state = nodes, state
        self._steps.append(StepRecord.of(self._action_label(action), PassList(nodes).pipeline, state))
        return self._observe(state), self._gain(previous, state), False, False, self._info()

    def peek(self, action: Any) -> tuple[float, State]:
        """The reward and state ``action`` would give, the episode left as it is (what a
        greedy agent compares; the in-process engine keeps the state it reached, so a
        step that takes it afterwards runs no pass again).

        Raises:
            InvalidInput: As :meth:`step`.
            CommandFailed: LLVM rejected or crashed on the action.
            CompileTimeout: LLVM ran past the time limit.
        """
        if self._state is None:
            raise InvalidInput("Call reset() before peek().")
        state = self._measure(PassList(self._apply(action)))
        return self._gain(self._state, state), state

    def _gain(self, before: State, after: State) -> float:
        """The reward of going from ``before`` to ``after``."""
        metric = self._reward.metric
        return float(before.cost(metric) - after.cost(metric)) / self._norm

    def _apply(self, action: Any) -> tuple[PassNode, ...]:
        """The elements after ``action``, checked against the pass grammar and set."""
        if self.action_space_name == "text":
            if not isinstance(action, str):
                raise InvalidInput(f"A text action is a pipeline string, not {type(action).__name__}.")
            return self._nodes + tuple(self.compiler.passes(action))
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise InvalidInput(f"An action of this space is an int, not {type(action).__name__} {action!r}.")
        assert isinstance(self.action_space, spaces.Discrete)
        index = int(action)
        if not 0 <= index < int(self.action_space.n):
            raise InvalidInput(
                f"Action {index} is outside the action space (0 to {int(self.action_space.n) - 1})."
            )
        size = len(self.action_names)
        (node,) = self.compiler.passes(self.action_names[index % size])
        if index >= size and self._nodes and joinable(self._nodes[-1], node):
            return (*self._nodes[:-1], join_nodes(self._nodes[-1], node))
        return (*self._nodes, node)

    @property
    def reward_space(self) -> RewardSpace:
        """The reward space (its ``metric`` is the cost rewards are the decrease of)."""
        return self._reward

    def cost_of(self, pipeline: str) -> tuple[int, float]:
        """The cost in the reward's metric of ``pipeline`` run from the start of the
        current benchmark (one ``opt`` run per element, as steps run), and the rewards an
        episode reaching it sums to; the episode is left as it is.

        Raises:
            InvalidPassList: ``pipeline`` fails the pass grammar or the searchable set.
            CommandFailed: LLVM rejected or crashed on it.
            CompileTimeout: LLVM ran past the time limit.
        """
        if self._initial is None:
            raise InvalidInput("Call reset() before cost_of().")
        passes = self.compiler.passes(pipeline) if pipeline else PassList()
        state = self._measure(passes, self._reward.needs)
        return state.cost(self._reward.metric), self._gain(self._initial, state)

    def _action_label(self, action: Any) -> str:
        """What records call ``action``: the text, or ``index:element`` (``+`` before
        the element for a nested action that joins)."""
        if self.action_space_name == "text":
            return str(action)
        index, size = int(action), len(self.action_names)
        return f"{index}:{'+' if index >= size else ''}{self.action_names[index % size]}"

    def _measure(self, passes: PassList, needs: frozenset[str] | None = None) -> State:
        """The state after ``passes``, measured as the spaces need (``needs``: what is
        wanted, default the env's spaces'; no code generated unless a size is needed)."""
        assert self.benchmark is not None
        program = self.benchmark.program
        needs = self._needs if needs is None else needs
        want_ir = "ir" in needs
        if "size" in needs:
            if passes:
                result = self.compiler.compile_stepwise(program, passes, want_ir=want_ir)
                m, ir = result.measurement, result.ir
            else:
                m, ir = self.compiler.measure(program, None), program.ir
            return State(m.ir_instructions, m.ir_hash or "", m.text, m.data, ir if want_ir else None)
        if passes:
            count, ir = self.compiler.count_stepwise(program, passes, want_ir=want_ir)
        else:
            count, ir = self.compiler.count(program, None), program.ir
        return State(count.ir_instructions, count.ir_hash or "", None, None, ir if want_ir else None)

    def baseline(self) -> tuple[int, int]:
        """(unoptimized, -Oz) cost of the current benchmark in the reward's metric,
        computed once per benchmark and LLVM for the process.

        Raises:
            InvalidInput: No episode was started.
        """
        if self.benchmark is None:
            raise InvalidInput("Call reset() before baseline().")
        program, metric = self.benchmark.program, self._reward.metric
        key = (program.id, self.compiler.llvm_version, metric)
        if key not in _BASELINES:
            oz = self.compiler.passes(OZ_PIPELINE)
            if metric == "ir":
                before = self.compiler.count(program, None).ir_instructions
                after = self.compiler.count(program, oz).ir_instructions
            else:
                unoptimized = self.compiler.measure(program, None)
                smallest = self.compiler.measure(program, oz)
                before = State(0, "", unoptimized.text, unoptimized.data).cost(metric)
                after = State(0, "", smallest.text, smallest.data).cost(metric)
            _BASELINES[key] = (before, after)
        return _BASELINES[key]

    def _observe(self, state: State) -> Any:
        if len(self._observations) == 1:
            return self._observations[0].compute(state)
        return {o.name: o.compute(state) for o in self._observations}

    def _info(self) -> dict[str, Any]:
        assert self.benchmark is not None and self._state is not None
        return {
            "benchmark": self.benchmark.uri,
            "llvm_version": self.compiler.llvm_version,
            "pipeline": PassList(self._nodes).pipeline,
            "ir_instructions": self._state.ir_instructions,
            "binary_size": self._state.binary_size,
        }

    # Records, validation, rendering -------------------------------------------

    @property
    def state(self) -> State:
        """What was measured of the current state.

        Raises:
            InvalidInput: No episode was started.
        """
        if self._state is None:
            raise InvalidInput("No episode yet: call reset().")
        return self._state

    @property
    def pipeline(self) -> PassList:
        """The current pipeline (what ``opt -passes=`` would run)."""
        return PassList(self._nodes)

    @property
    def record(self) -> EpisodeRecord:
        """The episode so far, as a replayable record."""
        if self.benchmark is None or self._initial is None:
            raise InvalidInput("No episode yet: call reset().")
        return EpisodeRecord(
            benchmark=self.benchmark.uri,
            llvm_version=self.compiler.llvm_version,
            action_space=self.action_space_name,
            initial=StepRecord.of("", "", self._initial),
            steps=tuple(self._steps),
        )

    def replay(self, record: EpisodeRecord) -> EpisodeRecord:
        """Measures every pipeline of ``record`` again on its benchmark, in this env's
        spaces; returns the new record (equal sizes where both measured them).

        Raises:
            InvalidInput: The record is of another LLVM version.
        """
        if record.llvm_version != self.compiler.llvm_version:
            raise InvalidInput(
                f"The record was made with LLVM {record.llvm_version}; this environment runs "
                f"{self.compiler.llvm_version}, whose passes may differ."
            )
        self.reset(options={"benchmark": record.benchmark})
        steps = []
        for step in record.steps:
            state = self._measure(self.compiler.passes(step.pipeline))
            steps.append(StepRecord.of(step.action, step.pipeline, state))
        self._nodes = tuple(self.compiler.passes(record.steps[-1].pipeline)) if record.steps else ()
        self._steps = steps
        self._state = self._measure(PassList(self._nodes)) if steps else self._state
        return self.record

    def validate(self, pipeline: str | None = None) -> Verdict:
        """Checks the current pipeline (or ``pipeline`` on the current benchmark) as a
        kept list is checked (module docstring).

        Returns ``not-checked`` for an empty pipeline (the unoptimized program).

        Raises:
            InvalidPassList: ``pipeline`` fails the pass grammar or the searchable set.
        """
        if self.benchmark is None:
            raise InvalidInput("No episode yet: call reset().")
        passes = (
            PassList(self._nodes)
            if pipeline is None
            else self.compiler.passes(pipeline)
            if pipeline
            else PassList()
        )
        if not passes:
            return Verdict.NOT_CHECKED
        program = self.benchmark.program
        try:
            measured = self.compiler.measure(program, passes)
        except (CommandFailed, CompileTimeout):
            return Verdict.COMPILE_FAILURE
        selector = Selector(self.compiler, make_gate(self.compiler))
        size = selector.policy.objective.of(measured)
        verdict, *_ = selector.check(program, passes, size, measured.ir_hash or "")
        return verdict

    def render(self) -> str | None:
        """The benchmark, the pipeline and the current sizes, as text (``ansi``)."""
        if self.render_mode != "ansi" or self._state is None or self.benchmark is None:
            return None
        sizes = f"{self._state.ir_instructions} IR instructions"
        if self._state.binary_size is not None:
            sizes += f", {self._state.binary_size} B (.text {self._state.text} + .data {self._state.data})"
        pipeline = PassList(self._nodes).pipeline
        return f"{self.benchmark.uri}: {len(self._steps)} steps, {sizes}\n-passes='{pipeline}'"

    def close(self) -> None:
        """Releases the compiler's workers when the env made its compiler."""
        if self._own_compiler:
            self.compiler.close()
        super().close()
