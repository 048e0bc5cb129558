"""A Gymnasium environment for pass ordering on the installed LLVM (``pip install 'llm-compiler[gym]'``).

Importing this package registers ``llm_compiler/PassOrdering-v0`` with Gymnasium::

    import gymnasium
    import llm_compiler.gym

    env = gymnasium.make(
        "llm_compiler/PassOrdering-v0",
        benchmark="file:examples/crc32.c",
        observation_space="Autophase",
        reward_space="IrInstructionCountOz",
    )
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(env.action_space.sample())

The environment (:mod:`.env`), its spaces (:mod:`.spaces`, :mod:`.features`), benchmarks
and datasets (:mod:`.benchmarks`) and episode records (:mod:`.record`) are documented in
their modules. Nothing below this layer imports it.
"""

from __future__ import annotations

import gymnasium

from llm_compiler.gym.benchmarks import Benchmark, Dataset, load_benchmark
from llm_compiler.gym.env import ACTION_SPACES, PassOrderingEnv
from llm_compiler.gym.record import EpisodeRecord, StepRecord
from llm_compiler.gym.spaces import OBSERVATION_SPACES, REWARD_SPACES, State

#: The id ``gymnasium.make`` takes.
ENV_ID = "llm_compiler/PassOrdering-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="llm_compiler.gym.env:PassOrderingEnv")

__all__ = [
    "ACTION_SPACES",
    "ENV_ID",
    "OBSERVATION_SPACES",
    "REWARD_SPACES",
    "Benchmark",
    "Dataset",
    "EpisodeRecord",
    "PassOrderingEnv",
    "State",
    "StepRecord",
    "load_benchmark",
]
