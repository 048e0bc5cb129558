"""Replayable records of pass-ordering episodes.

An :class:`EpisodeRecord` holds what is needed to replay an episode anywhere the same
LLVM is installed, and what to compare the replay with: the benchmark's URI, the LLVM
version, and after each step the pipeline (as ``opt -passes=`` takes it) and every size
measured. Records are frozen and read from and written to JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from llm_compiler.gym.spaces import State


@dataclass(frozen=True)
class StepRecord:
    """One state of an episode.

    Attributes:
        action: The action that led to it (``""`` for the initial state).
        pipeline: The whole pipeline after it (``""`` for the initial state).
        ir_instructions: Instructions of its IR.
        ir_hash: The hash of its IR text.
        text: ``.text`` bytes (None when the episode's spaces did not lower it).
        data: ``.data`` bytes (likewise).
    """

    action: str
    pipeline: str
    ir_instructions: int
    ir_hash: str
    text: int | None = None
    data: int | None = None

    @classmethod
    def of(cls, action: str, pipeline: str, state: State) -> StepRecord:
        """The record of ``state``, reached by ``action`` with ``pipeline``."""
        return cls(action, pipeline, state.ir_instructions, state.ir_hash, state.text, state.data)

    def same_sizes(self, other: StepRecord) -> bool:
        """Whether ``other`` measured the same IR, counts and (where both have them) sizes."""
        if (self.pipeline, self.ir_instructions, self.ir_hash) != (
            other.pipeline,
            other.ir_instructions,
            other.ir_hash,
        ):
            return False
        return all(
            mine is None or theirs is None or mine == theirs
            for mine, theirs in ((self.text, other.text), (self.data, other.data))
        )


@dataclass(frozen=True)
class EpisodeRecord:
    """An episode: benchmark, LLVM version, action space, initial state and steps."""

    benchmark: str
    llvm_version: str
    action_space: str
    initial: StepRecord
    steps: tuple[StepRecord, ...] = ()

    @property
    def pipeline(self) -> str:
        """The final pipeline (``""`` when no step was taken)."""
        return self.steps[-1].pipeline if self.steps else ""

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EpisodeRecord:
        """The record :meth:`to_json` wrote.

        Raises:
            KeyError, TypeError: ``data`` is not such a record.
        """
        return cls(
            benchmark=data["benchmark"],
            llvm_version=data["llvm_version"],
            action_space=data["action_space"],
            initial=StepRecord(**data["initial"]),
            steps=tuple(StepRecord(**step) for step in data["steps"]),
        )

    def same_sizes(self, other: EpisodeRecord) -> bool:
        """Whether ``other`` replays this record: same benchmark, LLVM and steps, and
        the same measurements step by step."""
        return (
            (self.benchmark, self.llvm_version) == (other.benchmark, other.llvm_version)
            and len(self.steps) == len(other.steps)
            and self.initial.same_sizes(other.initial)
            and all(a.same_sizes(b) for a, b in zip(self.steps, other.steps, strict=True))
        )
