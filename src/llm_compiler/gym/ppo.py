"""A PPO agent for the pass-ordering environment, with stable-baselines3 (``[gym-agents]``).

The policy is stable-baselines3's ``MlpPolicy`` (two layers of 64) over the
``Autophase`` observation, each count scaled by ``log1p`` (:class:`LogAutophase`: raw
counts span six orders of magnitude), with the ``paper`` action space. Training draws a
benchmark from the training programs at each reset and runs episodes of ``steps``
actions (Gymnasium's ``TimeLimit``) for a wall-clock budget; the model is saved in
stable-baselines3's own zip format (weights and settings, none of this project's
objects). The agent runs the trained policy deterministically (the most likely action)
for ``steps`` actions and keeps the best prefix, as the random baseline does.

stable-baselines3 and torch are imported inside the functions that need them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from llm_compiler.errors import LlmCompilerError
from llm_compiler.gym.baselines import DEFAULT_STEPS, AgentResult
from llm_compiler.gym.env import PassOrderingEnv

#: The observation the policy sees.
OBSERVATION = "Autophase"


class LogAutophase(gymnasium.ObservationWrapper[np.ndarray, Any, np.ndarray]):
    """``log1p`` of each Autophase count, as float32 (0 to 50)."""

    def __init__(self, env: gymnasium.Env[Any, Any]) -> None:
        super().__init__(env)
        shape = env.observation_space.shape
        assert shape is not None
        self.observation_space = spaces.Box(0.0, 50.0, shape=shape, dtype=np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return np.log1p(observation.astype(np.float64)).astype(np.float32)


class _TrainingBenchmarks(gymnasium.Wrapper[Any, Any, Any, Any]):
    """Resets to a benchmark drawn (seeded) from ``uris``."""

    def __init__(self, env: gymnasium.Env[Any, Any], uris: Sequence[str], seed: int) -> None:
        super().__init__(env)
        self.uris = list(uris)
        self.rng = np.random.default_rng(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        uri = self.uris[int(self.rng.integers(0, len(self.uris)))]
        return self.env.reset(seed=seed, options={**(options or {}), "benchmark": uri})


def _imports() -> Any:
    try:
        import stable_baselines3
    except ImportError:
        raise LlmCompilerError(
            "The PPO agent needs stable-baselines3: pip install 'llm-compiler[gym-agents]'."
        ) from None
    return stable_baselines3


def wrap(env: PassOrderingEnv, steps: int) -> gymnasium.Env[Any, Any]:
    """``env`` as the policy sees it: log-scaled Autophase, ``steps`` actions an episode."""
    return gymnasium.wrappers.TimeLimit(LogAutophase(env), max_episode_steps=steps)


def train_ppo(
    env: PassOrderingEnv,
    uris: Sequence[str],
    out: Path,
    *,
    seconds: float,
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
) -> dict[str, Any]:
    """Trains a PPO policy on ``uris`` for ``seconds`` of wall time and saves it to ``out``.

    Args:
        env: An environment with the ``Autophase`` observation and the ``paper`` actions.
        uris: The training benchmarks.
        out: Where the model goes (stable-baselines3's zip).
        seconds: The wall-clock budget.
        steps: Actions per episode.
        seed: The seed of the policy and of the benchmark draws.

    Returns:
        What was done: seconds, env steps and episodes.

    Raises:
        LlmCompilerError: stable-baselines3 is not installed, or the env is not set up
            for the policy.
    """
    sb3 = _imports()
    from stable_baselines3.common.callbacks import BaseCallback

    if env.observation_names != (OBSERVATION,) or env.action_space_name != "paper":
        raise LlmCompilerError(f"PPO trains on the {OBSERVATION} observation and the paper action space.")
    if not uris:
        raise LlmCompilerError("No training benchmarks.")

    class _Clock(BaseCallback):
        def __init__(self, deadline: float) -> None:
            super().__init__()
            self.deadline = deadline

        def _on_step(self) -> bool:
            return time.monotonic() < self.deadline

    started = time.monotonic()
    training = _TrainingBenchmarks(wrap(env, steps), uris, seed)
    model = sb3.PPO("MlpPolicy", training, n_steps=256, batch_size=64, seed=seed, verbose=0, device="cpu")
    model.learn(total_timesteps=10**9, callback=_Clock(started + seconds))
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    return {"seconds": round(time.monotonic() - started, 1), "env_steps": int(model.num_timesteps)}


@dataclass
class PpoAgent:
    """Runs a trained policy (module docstring)."""

    model_path: Path
    steps: int = DEFAULT_STEPS
    name: str = "ppo"

    def __post_init__(self) -> None:
        self._model: Any = None

    def run(self, env: PassOrderingEnv, benchmark: str) -> AgentResult:
        started = time.perf_counter()
        if self._model is None:
            self._model = _imports().PPO.load(str(self.model_path), device="cpu")
        view = LogAutophase(env)
        observation, _ = view.reset(options={"benchmark": benchmark})
        metric = env.reward_space.metric
        best_cost, best = env.state.cost(metric), ""
        taken = 0
        for _ in range(self.steps):
            action, _ = self._model.predict(observation, deterministic=True)
            observation, _, terminated, _, _ = view.step(int(action))
            taken += 1
            if terminated:
                break
            if env.state.cost(metric) < best_cost:
                best_cost, best = env.state.cost(metric), env.pipeline.pipeline
        cost, reward = env.cost_of(best)
        return AgentResult(benchmark, best, cost, reward, taken, time.perf_counter() - started)
