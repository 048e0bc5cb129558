"""The built-in predictor as a proposer, and the specs that name it.

``builtin`` is the ranker shipped inside the package for the LLVM in use
(``predictor/data/ranker-llvm<major>.json``, trained by this project on its corpus's
train split; for an LLVM without one, the nearest one's lists adapted to it, see
:mod:`llm_compiler.predictor.shipped`); ``builtin:PATH`` is another one
(``llm-compiler predictor train``); ``,k=N`` (or ``builtin:k=N``) sets how many of its
ranked lists are measured per unit (default 10). ``common:N`` is the unlearned
baseline: the same candidates, most often kept in training first, whatever the unit.

:class:`RankedLists` is a :class:`~llm_compiler.autotune.proposer.Proposer` like any
search: ``optimize`` and ``evaluate`` measure its first k lists beside -Oz and keep the
smallest validated one (:class:`~llm_compiler.models.proposed.ProposerOptimizer`);
``tune`` could start from them as from a model's lists.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.autotune.proposer import ProposalRequest, Proposer
from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.models.proposed import ProposerOptimizer
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.predictor.ranker import Ranker, load
from llm_compiler.predictor.shipped import ranker_file
from llm_compiler.validation.gate import Gate

#: Lists measured per unit unless a spec says otherwise.
DEFAULT_K = 10
#: The spec prefixes this module answers.
PREFIXES = ("builtin", "common")


@dataclass(frozen=True)
class PredictorSpec:
    """A parsed ``builtin[:PATH][,k=N]`` or ``common:N`` spec.

    Attributes:
        text: The spec as given. path: The ranker file; None for the shipped one of the
            LLVM in use. k: Lists measured per unit.
        learned: False for ``common:N`` (the unlearned order).
    """

    text: str
    path: Path | None
    k: int = DEFAULT_K
    learned: bool = True


def is_predictor_spec(spec: str) -> bool:
    """Whether ``spec`` names the built-in predictor or its unlearned baseline."""
    return spec.partition(":")[0] in PREFIXES


def parse_spec(spec: str) -> PredictorSpec:
    """Reads a predictor spec (module docstring).

    Raises:
        InvalidInput: A malformed spec.
    """
    kind, _, rest = spec.partition(":")
    usage = "use builtin, builtin:k=N, builtin:PATH, builtin:PATH,k=N or common:N (N >= 1)"
    if kind == "common":
        if not rest.isdigit() or int(rest) < 1:
            raise InvalidInput(f"{spec!r}: {usage}.")
        return PredictorSpec(spec, None, int(rest), learned=False)
    if kind != "builtin":
        raise InvalidInput(f"{spec!r}: {usage}.")
    path: Path | None = None
    k = DEFAULT_K
    for item in filter(None, rest.split(",")):
        if item.startswith("k="):
            if not item[2:].isdigit() or int(item[2:]) < 1:
                raise InvalidInput(f"{spec!r}: k must be a whole number >= 1; {usage}.")
            k = int(item[2:])
        else:
            path = Path(item)
    if path is not None and not path.is_file():
        raise InvalidInput(f"{spec!r}: no predictor file at {path}; {usage}.")
    return PredictorSpec(spec, path, k)


@functools.lru_cache(maxsize=8)
def _load(path: str, compiler: Compiler) -> Ranker:
    return load(Path(path), compiler)


def ranker_for(spec: PredictorSpec, compiler: Compiler) -> Ranker:
    """The spec's ranker, checked against ``compiler``'s LLVM (loaded once per process)."""
    return _load(str(spec.path or ranker_file(compiler)), compiler)


@dataclass(frozen=True)
class RankedLists(Proposer):
    """A ranker's candidates for each program, best first (or by frequency, unlearned).

    Args:
        ranker: The trained ranker.
        learned: Rank per unit (True) or use the training frequency order (False).
    """

    ranker: Ranker = field(hash=False, compare=False)
    learned: bool = True
    name: str = field(default="built-in predictor", init=False)

    def ask(self, request: ProposalRequest) -> list[PassList]:
        order = self.ranker.rank(request.program.ir) if self.learned else self.ranker.by_frequency()
        return [parse_pipeline(pipeline) for pipeline in order[request.start : request.start + request.count]]

    def identity(self) -> dict[str, Any]:
        return {
            "proposer": "RankedLists",
            "learned": self.learned,
            "candidates": len(self.ranker.pipelines),
            "training": self.ranker.manifest.get("training", {}).get("packages"),
        }


def predictor_optimizer(compiler: Compiler, gate: Gate, spec: str, jobs: int = 1) -> ProposerOptimizer:
    """``optimize`` with the predictor named by ``spec``: its first k lists, -Oz, the gate.

    Raises:
        InvalidInput: A malformed spec, or a ranker trained for another LLVM or pass set.
    """
    parsed = parse_spec(spec)
    ranker = ranker_for(parsed, compiler)
    return ProposerOptimizer(
        compiler,
        RankedLists(ranker, parsed.learned),
        gate,
        compiler.pass_set,
        parsed.k,
        spec,
        jobs=jobs,
    )
