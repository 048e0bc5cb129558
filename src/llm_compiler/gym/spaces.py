"""Observation and reward spaces of the pass-ordering environment, by name.

Names and definitions follow CompilerGym's LLVM environment where it had them, so that
agents written for it port; the others are this project's.

Observations (each a Gymnasium space; "state" is the module after the actions so far):

============================  ==========================  ====================================================
name                          space                       what it is
============================  ==========================  ====================================================
``Ir``                        ``Text``                    the module's textual IR
``IrSha1``                    ``Text`` (40 hex digits)    SHA-1 of that text
``InstCount``                 ``Box((70,), int64)``       CompilerGym's InstCount (:mod:`.features`)
``Autophase``                 ``Box((56,), int64)``       CompilerGym's Autophase (:mod:`.features`)
``IrInstructionCount``        ``Box((1,), int64)``        instructions of the IR (no code generated)
``ObjectTextSizeBytes``       ``Box((1,), int64)``        ``.text`` bytes of the object ``llc`` makes
``BinarySize``                ``Box((1,), int64)``        ``.text + .data`` bytes, the paper's metric
``Features``                  ``Box((N,), float32)``      the built-in predictor's feature vector
``IR2Vec``                    ``Box((300,), float32)``    IR2Vec's flow-aware program vector (:mod:`.ir2vec`)
============================  ==========================  ====================================================

Text observations are ASCII: LLVM escapes other characters in names and strings; a
module whose comments carry others (a ``; ModuleID`` of a non-ASCII path) gives a
string outside the ``Text`` space's character set.

Rewards (the value of one step; an episode's rewards sum to the whole change):

* ``IrInstructionCount``, ``ObjectTextSizeBytes``, ``BinarySize``: the decrease of the
  cost since the previous state (positive when smaller);
* ``IrInstructionCountOz``, ``ObjectTextSizeOz``, ``BinarySizeOz``: the same divided by
  ``max(initial - Oz, 1)``, where ``initial`` is the unoptimized module's cost and ``Oz``
  the cost after ``-Oz``, as CompilerGym normalises: an episode's rewards sum to 1.0
  when it reaches -Oz's cost, to more when it beats it. The baseline is computed once
  per benchmark and LLVM and kept for the process.

Rewards and observations on instruction counts never generate code; the size ones lower
the module to an object (the in-process engine's prefix states make each step run only
its new pass).
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from llm_compiler.errors import InvalidInput
from llm_compiler.gym.features import AUTOPHASE_NAMES, INST_COUNT_NAMES, autophase, inst_count
from llm_compiler.gym.ir2vec import DIMENSIONS, ir2vec_vector
from llm_compiler.predictor.features import FEATURE_NAMES, ir_features

#: The characters of text observations and text actions.
TEXT_CHARSET = string.printable
#: Longest text a ``Text`` space admits (IR of large units runs to megabytes).
MAX_TEXT_LENGTH = 1 << 30
_INT_MAX = np.iinfo(np.int64).max
_FLOAT_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class State:
    """What was measured of one state of an episode.

    Attributes:
        ir_instructions: Instructions of the IR.
        ir_hash: The hash of the IR text (:func:`llm_compiler.toolchain.inprocess.ir_hash`).
        text: ``.text`` bytes of its object (None when it was not lowered).
        data: ``.data`` bytes (None when it was not lowered).
        ir: The IR text (None when no observation needs it).
    """

    ir_instructions: int
    ir_hash: str
    text: int | None = None
    data: int | None = None
    ir: str | None = None

    @property
    def binary_size(self) -> int | None:
        """``.text + .data``, or None when not lowered."""
        return None if self.text is None or self.data is None else self.text + self.data

    def cost(self, metric: str) -> int:
        """The value of ``metric`` (``ir``, ``text`` or ``binary``)."""
        value = {"ir": self.ir_instructions, "text": self.text, "binary": self.binary_size}[metric]
        assert value is not None, f"{metric} was not measured"
        return value


@dataclass(frozen=True)
class ObservationSpace:
    """One named observation.

    Attributes:
        name: Its name.
        needs: What it is computed from: ``ir`` (the text), ``size`` (an object) or
            nothing beyond the instruction count.
        space: The Gymnasium space of its values.
        compute: Its value in a state.
    """

    name: str
    needs: frozenset[str]
    space: spaces.Space[Any]
    compute: Callable[[State], Any]


@dataclass(frozen=True)
class RewardSpace:
    """One named reward: the decrease of ``metric``, normalised to -Oz's gain or not."""

    name: str
    metric: str
    normalized: bool

    @property
    def needs(self) -> frozenset[str]:
        """``size`` for the object-size rewards."""
        return frozenset({"size"}) if self.metric != "ir" else frozenset()


def _vector(values: tuple[int, ...]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def _scalar(value: int | None) -> np.ndarray:
    assert value is not None
    return np.asarray([value], dtype=np.int64)


def _ir(state: State) -> str:
    assert state.ir is not None
    return state.ir


def _box(shape: int, dtype: type = np.int64) -> spaces.Box:
    if dtype is np.int64:
        return spaces.Box(0, _INT_MAX, shape=(shape,), dtype=np.int64)
    return spaces.Box(-_FLOAT_MAX, _FLOAT_MAX, shape=(shape,), dtype=np.float32)


def _observations() -> dict[str, ObservationSpace]:
    text = spaces.Text(MAX_TEXT_LENGTH, min_length=0, charset=TEXT_CHARSET)
    ir, size = frozenset({"ir"}), frozenset({"size"})
    found = [
        ObservationSpace("Ir", ir, text, _ir),
        ObservationSpace(
            "IrSha1",
            ir,
            spaces.Text(40, min_length=40, charset=string.hexdigits[:16]),
            lambda s: hashlib.sha1(_ir(s).encode()).hexdigest(),
        ),
        ObservationSpace("InstCount", ir, _box(len(INST_COUNT_NAMES)), lambda s: _vector(inst_count(_ir(s)))),
        ObservationSpace("Autophase", ir, _box(len(AUTOPHASE_NAMES)), lambda s: _vector(autophase(_ir(s)))),
        ObservationSpace("IrInstructionCount", frozenset(), _box(1), lambda s: _scalar(s.ir_instructions)),
        ObservationSpace("ObjectTextSizeBytes", size, _box(1), lambda s: _scalar(s.text)),
        ObservationSpace("BinarySize", size, _box(1), lambda s: _scalar(s.binary_size)),
        ObservationSpace(
            "Features",
            ir,
            spaces.Box(0, _FLOAT_MAX, shape=(len(FEATURE_NAMES),), dtype=np.float32),
            lambda s: np.asarray(ir_features(_ir(s)), dtype=np.float32),
        ),
        ObservationSpace("IR2Vec", ir, _box(DIMENSIONS, np.float64), lambda s: ir2vec_vector(_ir(s))),
    ]
    return {space.name: space for space in found}


#: The observation spaces by name.
OBSERVATION_SPACES: dict[str, ObservationSpace] = _observations()

#: The reward spaces by name.
REWARD_SPACES: dict[str, RewardSpace] = {
    space.name: space
    for space in (
        RewardSpace("IrInstructionCount", "ir", False),
        RewardSpace("IrInstructionCountOz", "ir", True),
        RewardSpace("ObjectTextSizeBytes", "text", False),
        RewardSpace("ObjectTextSizeOz", "text", True),
        RewardSpace("BinarySize", "binary", False),
        RewardSpace("BinarySizeOz", "binary", True),
    )
}


def _named(table: dict[str, Any], name: str, what: str) -> Any:
    try:
        return table[name]
    except KeyError:
        raise InvalidInput(f"Unknown {what} {name!r}; choose one of {', '.join(table)}.") from None


def observation_space(name: str) -> ObservationSpace:
    """The observation space ``name``.

    Raises:
        InvalidInput: No observation space has that name.
    """
    return _named(OBSERVATION_SPACES, name, "observation space")  # type: ignore[no-any-return]


def reward_space(name: str) -> RewardSpace:
    """The reward space ``name``.

    Raises:
        InvalidInput: No reward space has that name.
    """
    return _named(REWARD_SPACES, name, "reward space")  # type: ignore[no-any-return]
