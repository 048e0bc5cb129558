"""Baseline agents of the pass-ordering environment: random, greedy and local search.

Each agent optimizes one benchmark in a :class:`~llm_compiler.gym.env.PassOrderingEnv`
and returns an :class:`AgentResult`: the best pipeline it reached (in the env's reward
metric), its cost, the rewards summed up to it, the env steps it took and its wall time.

* ``random``: ``steps`` uniformly drawn actions (seeded); the best prefix is the answer,
  as CompilerGym's random-search baseline keeps the best state seen;
* ``greedy``: at each step every action is tried (:meth:`PassOrderingEnv.peek`, which
  runs only the one new pass on the kept state) and the best taken, until none
  improves the cost or ``steps`` were taken;
* ``local``: this project's local search (:class:`~llm_compiler.autotune.local_search.LocalSearch`)
  for ``budget`` pipelines, each measured from the start by the env's own semantics
  (:meth:`PassOrderingEnv.cost_of`), its best list then applied in the env so that the
  result is an episode like the others.

The PPO agent is in :mod:`llm_compiler.gym.ppo`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput, InvalidPassList
from llm_compiler.gym.env import PassOrderingEnv
from llm_compiler.selection.proposer import Evaluated, ProposalRequest

#: The actions of an episode unless told otherwise (CompilerGym's examples used 45).
DEFAULT_STEPS = 45


@dataclass(frozen=True)
class AgentResult:
    """What an agent reached on one benchmark.

    Attributes:
        benchmark: The benchmark's URI.
        pipeline: The best pipeline reached (``""``: none beat the unoptimized module).
        cost: Its cost in the env's reward metric.
        reward: The env's rewards summed from the start to that pipeline.
        steps: Env steps (and tried actions) the agent spent.
        seconds: Its wall time.
    """

    benchmark: str
    pipeline: str
    cost: int
    reward: float
    steps: int
    seconds: float


class Agent(Protocol):
    """Optimizes one benchmark in an environment."""

    @property
    def name(self) -> str:
        """What tables call it."""
        ...

    def run(self, env: PassOrderingEnv, benchmark: str) -> AgentResult:
        """Runs on ``benchmark`` (a URI) and returns the best it reached."""
        ...


def _result(env: PassOrderingEnv, benchmark: str, pipeline: str, steps: int, started: float) -> AgentResult:
    cost, reward = env.cost_of(pipeline)
    return AgentResult(benchmark, pipeline, cost, reward, steps, time.perf_counter() - started)


@dataclass(frozen=True)
class RandomAgent:
    """Uniform random actions; the best prefix is kept (module docstring)."""

    steps: int = DEFAULT_STEPS
    seed: int = 0
    name: str = "random"

    def run(self, env: PassOrderingEnv, benchmark: str) -> AgentResult:
        started = time.perf_counter()
        env.reset(seed=self.seed, options={"benchmark": benchmark})
        env.action_space.seed(self.seed)
        metric = env.reward_space.metric
        best_cost, best = env.state.cost(metric), ""
        taken = 0
        for _ in range(self.steps):
            _, _, terminated, _, _ = env.step(env.action_space.sample())
            taken += 1
            if terminated:
                break
            if env.state.cost(metric) < best_cost:
                best_cost, best = env.state.cost(metric), env.pipeline.pipeline
        return _result(env, benchmark, best, taken, started)


@dataclass(frozen=True)
class GreedyAgent:
    """The best single next action at each step (module docstring)."""

    steps: int = DEFAULT_STEPS
    name: str = "greedy"

    def run(self, env: PassOrderingEnv, benchmark: str) -> AgentResult:
        started = time.perf_counter()
        env.reset(options={"benchmark": benchmark})
        tried = 0
        for _ in range(self.steps):
            best_action, best_reward = None, 0.0
            for action in range(int(env.action_space.n)):  # type: ignore[attr-defined]
                tried += 1
                try:
                    reward, _ = env.peek(action)
                except (CommandFailed, CompileTimeout):
                    continue
                if reward > best_reward:
                    best_action, best_reward = action, reward
            if best_action is None:
                break
            env.step(best_action)
        return _result(env, benchmark, env.pipeline.pipeline, tried, started)


@dataclass(frozen=True)
class LocalSearchAgent:
    """This project's local search for ``budget`` pipelines (module docstring)."""

    budget: int = 100
    seed: int = 0
    name: str = "local"

    def run(self, env: PassOrderingEnv, benchmark: str) -> AgentResult:
        started = time.perf_counter()
        env.reset(options={"benchmark": benchmark})
        assert env.benchmark is not None
        search = LocalSearch(seed=self.seed)
        history: list[Evaluated] = []
        best_cost, best = env.state.cost(env.reward_space.metric), ""
        while len(history) < self.budget:
            count = min(search.batch_size, self.budget - len(history))
            request = ProposalRequest(
                env.benchmark.program, env.compiler.pass_set, len(history), count, tuple(history)
            )
            for passes in search.ask(request):
                try:
                    cost, _ = env.cost_of(passes.pipeline)
                except (CommandFailed, CompileTimeout):
                    history.append(Evaluated(passes.pipeline, "compile-fail", None))
                    continue
                except InvalidPassList:
                    history.append(Evaluated(passes.pipeline, "invalid", None))
                    continue
                history.append(Evaluated(passes.pipeline, "ok", cost))
                if cost < best_cost:
                    best_cost, best = cost, passes.pipeline
        return _result(env, benchmark, best, len(history), started)


def make_agent(name: str, *, steps: int = DEFAULT_STEPS, budget: int = 100, seed: int = 0) -> Agent:
    """The baseline ``name`` (``random``, ``greedy`` or ``local``).

    Raises:
        InvalidInput: No baseline has that name (``ppo`` is made by :mod:`llm_compiler.gym.ppo`).
    """
    if name == "random":
        return RandomAgent(steps, seed)
    if name == "greedy":
        return GreedyAgent(steps)
    if name == "local":
        return LocalSearchAgent(budget, seed)
    raise InvalidInput(f"Unknown agent {name!r}; choose random, greedy, local or ppo.")
