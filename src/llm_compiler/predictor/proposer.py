"""The built-in predictor as a proposer, and the specs that name it.

``builtin`` is the ranker shipped inside the package for the LLVM in use
(``predictor/data/ranker-llvm<major>.json``, trained by this project on its corpus's
train split; for an LLVM without one, the nearest one's lists adapted to it, see
:mod:`llm_compiler.predictor.shipped`); ``builtin:PATH`` is another one
(``llm-compiler predictor train``). By default it measures its ranked lists while the
ranker predicts they are worth it (a ranker whose model predicts gains stops once the next
list's predicted gain is below the threshold chosen on held-out packages), at most 10;
``max=N`` sets that most, ``stop=X`` another threshold (a log gain: 0.002 measures more
lists than LLVM 19's shipped 0.004, for a little more gain; the ranker's manifest has the
held-out curve), ``k=N`` measures exactly the first N instead. ``common:N`` is the unlearned
baseline: the same candidates, most often kept in training first, whatever the unit.
Both are made from specs by the registry (:mod:`llm_compiler.selection.registry`),
through :func:`builtin` and :func:`common`.

:class:`RankedLists` is a :class:`~llm_compiler.selection.proposer.Proposer` like any
search: ``optimize`` and ``evaluate`` measure its first k lists beside -Oz and keep the
smallest validated one (:class:`~llm_compiler.models.proposed.ProposerOptimizer`);
``tune`` could start from them as from a model's lists.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.predictor.ranker import Ranker, load
from llm_compiler.predictor.shipped import ranker_file
from llm_compiler.selection.proposer import ProposalRequest, Proposer
from llm_compiler.selection.registry import ProposerContext, Spec


@functools.lru_cache(maxsize=8)
def _load(path: str, compiler: Compiler) -> Ranker:
    return load(Path(path), compiler)


def ranker_for(path: Path | None, compiler: Compiler) -> Ranker:
    """The ranker at ``path`` (None: the shipped one of ``compiler``'s LLVM), checked against
    that LLVM and loaded once per process."""
    return _load(str(path or ranker_file(compiler)), compiler)


@dataclass(frozen=True)
class RankedLists(Proposer):
    """A ranker's candidates for each program, best first (or by frequency, unlearned).

    Args:
        ranker: The trained ranker.
        learned: Rank per unit (True) or use the training frequency order (False).
        stops_early: Offer only the lists the ranker predicts are worth measuring
            (:meth:`~llm_compiler.predictor.ranker.Ranker.adaptive`).
    """

    ranker: Ranker = field(hash=False, compare=False)
    learned: bool = True
    stops_early: bool = False
    name = "built-in predictor"

    def ask(self, request: ProposalRequest) -> list[PassList]:
        if self.learned and self.stops_early:
            order = self.ranker.adaptive(request.program.ir, request.start + request.count)
        elif self.learned:
            order = self.ranker.rank(request.program.ir)
        else:
            order = self.ranker.by_frequency()
        return [parse_pipeline(pipeline) for pipeline in order[request.start : request.start + request.count]]

    def identity(self) -> dict[str, Any]:
        return {
            "proposer": "RankedLists",
            "learned": self.learned,
            "stops_early": self.stops_early,
            "candidates": len(self.ranker.pipelines),
            "training": self.ranker.manifest.get("training", {}).get("packages"),
        }


def _ranker_path(spec: Spec) -> Path | None:
    if not spec.argument:
        return None
    path = Path(spec.argument)
    if not path.is_file():
        raise InvalidInput(f"{spec.text!r}: no predictor file at {path}; use builtin or builtin:PATH[,k=N].")
    return path


def builtin(spec: Spec, context: ProposerContext) -> Proposer:
    """``builtin[:PATH][,k=N|max=N][,stop=X]``: the built-in predictor (the shipped ranker, or ``PATH``).

    In ``optimize`` and ``evaluate`` (role ``first``) its ranked lists for the unit; in
    ``tune`` (role ``search``) those lists first, then local search from them
    (``first=N,warmup=W`` set how many of each, :class:`~llm_compiler.predictor.search.PredictedSearch`).

    Raises:
        InvalidInput: A malformed spec, or a ranker trained for another LLVM or pass set.
    """
    path = _ranker_path(spec)
    if context.role == "search":
        # Searching imports the tuner's strategies; ranking alone (every cc miss) does not.
        from llm_compiler.predictor.search import PREDICTED_FIRST, PREDICTED_WARMUP, predicted_search

        spec.refuse_options("first", "warmup")
        return predicted_search(
            context.compiler,
            context.seed,
            context.max_length,
            ranker_path=path,
            first=spec.number("first", PREDICTED_FIRST),
            warmup=spec.number("warmup", PREDICTED_WARMUP, minimum=0),
        )
    spec.refuse_options("k", "max", "stop")
    ranker = ranker_for(path, context.compiler)
    if "stop" in spec.options:
        if "k" in spec.options or ranker.gauge is None:
            why = "with k=N, which measures exactly N" if "k" in spec.options else "this ranker has no gauge"
            raise InvalidInput(f"{spec.text!r}: stop=X sets where the adaptive default stops; {why}.")
        ranker = replace(ranker, stop=_stop_option(spec))
    return RankedLists(ranker, learned=True, stops_early="k" not in spec.options)


def _stop_option(spec: Spec) -> float:
    text = spec.options["stop"]
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InvalidInput(
            f"{spec.text!r}: stop must be a number, a predicted log gain such as 0.004 (got {text!r})."
        )
    return value


def common(spec: Spec, context: ProposerContext) -> Proposer:
    """``common:N``: the predictor's candidates most often kept in training, whatever the unit.

    Raises:
        InvalidInput: Used as a search, or a malformed spec.
    """
    if context.role == "search":
        raise InvalidInput(f"{spec.text!r}: common is a baseline for optimize and evaluate, not a search.")
    spec.refuse_options("k")
    if spec.argument and not spec.argument.isdigit():
        raise InvalidInput(f"{spec.text!r}: use common:N (N >= 1), the number of lists measured.")
    return RankedLists(ranker_for(None, context.compiler), learned=False)
