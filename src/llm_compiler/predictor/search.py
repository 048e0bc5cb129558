"""The predicted search: the built-in predictor's lists first, then local search from them.

Local search spends its first lists on random ones, to have parents to change. The
built-in predictor already knows which of its candidate lists did best on training
units like this one (:mod:`llm_compiler.predictor.ranker`), so
:class:`PredictedSearch` measures its ``first`` top-ranked candidates and then
lets a local search go on, with those measurements in its history: the lists that
beat -Oz become its first parents, and it needs fewer random lists of its own.
Everything after the candidates is the local search's, unchanged, so the search stays
deterministic and a resumed run proposes the same lists.

The ranker is the shipped one for the LLVM in use (adapted from the nearest shipped
one where none was trained with it, :mod:`llm_compiler.predictor.shipped`); a ranker
file named by hand must have been trained for that LLVM
(:func:`llm_compiler.predictor.ranker.load` checks it). :func:`make_search` is the one
place search names are read: the names of
:mod:`llm_compiler.autotune.strategies` plus ``predicted``; the default search,
:data:`DEFAULT_SEARCH`, falls back to plain local search, with a note, where the
shipped ranker does not fit the LLVM in use.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.autotune.proposer import ProposalRequest, Proposer, first_then
from llm_compiler.autotune.strategies import DEFAULT_SEARCH as FALLBACK_SEARCH
from llm_compiler.autotune.strategies import SEARCH_NAMES, make_proposer
from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.passes.searchable import PassSet
from llm_compiler.predictor.ranker import Ranker, load
from llm_compiler.predictor.shipped import ranker_file

logger = logging.getLogger(__name__)

#: The default search, chosen by measurement on held-out units (docs/benchmarks.md).
DEFAULT_SEARCH = "predicted"
#: The predictor's candidates measured first.
PREDICTED_FIRST = 20
#: Random lists the local search draws after them (plain local search: 40).
PREDICTED_WARMUP = 10


@functools.lru_cache(maxsize=4)
def _ranker(path: str) -> Ranker:
    """The ranker at ``path``, read once per process (its fit was checked when the search was made)."""
    return load(Path(path))


@functools.lru_cache(maxsize=8)
def _expressible(path: str, pass_set: PassSet) -> frozenset[str]:
    """The ranker's candidates made of ``pass_set``'s passes only (worked out once per process)."""
    members = set(pass_set.members)
    return frozenset(
        text
        for text in _ranker(path).pipelines
        if all(str(PassList((node,))) in members for node in parse_pipeline(text))
    )


@dataclass(frozen=True)
class PredictedSearch(Proposer):
    """The ranker's first ``first`` candidates for the program, then local search (module docstring).

    Args:
        ranker_path: The ranker file (the shipped one by default).
        ranker_digest: What the ranker file holds (its candidates), for records.
        first: Candidates measured first.
        then: The local search that goes on.
    """

    ranker_path: str
    ranker_digest: str
    first: int = PREDICTED_FIRST
    then: Proposer = field(default_factory=functools.partial(LocalSearch, warmup=PREDICTED_WARMUP))
    name: str = field(default="predicted, then local search", init=False)
    adaptive: ClassVar[bool] = True
    batch_size: ClassVar[int] = 10

    def ask(self, request: ProposalRequest) -> list[PassList]:
        expressible = _expressible(self.ranker_path, request.pass_set)

        def candidates() -> list[str]:
            ranked = _ranker(self.ranker_path).rank(request.program.ir)
            return [text for text in ranked if text in expressible][: self.first]

        return first_then(request, min(self.first, len(expressible)), candidates, self.then)

    def identity(self) -> dict[str, Any]:
        return {
            "proposer": "PredictedSearch",
            "ranker": self.ranker_digest,
            "first": self.first,
            "then": self.then.identity(),
        }


def predicted_search(
    compiler: Compiler,
    seed: int = 0,
    max_length: int = MAX_LIST_LENGTH,
    *,
    ranker_path: Path | None = None,
    first: int = PREDICTED_FIRST,
    warmup: int = PREDICTED_WARMUP,
) -> PredictedSearch:
    """The predicted search for ``compiler``'s LLVM: ``first`` candidates, then local
    search with ``warmup`` random lists.

    Raises:
        InvalidInput: The ranker was trained for another LLVM or pass set.
    """
    path = ranker_path or ranker_file(compiler)
    ranker = load(path, compiler)
    digest = hashlib.sha256("\n".join(ranker.pipelines).encode()).hexdigest()[:16]
    return PredictedSearch(
        str(path),
        digest,
        first,
        LocalSearch(seed, max_length, warmup=warmup),
    )


def make_search(
    name: str | None, compiler: Compiler, seed: int = 0, max_length: int = MAX_LIST_LENGTH
) -> Proposer:
    """The proposer a search name stands for; None is the default search.

    The default falls back to local search where the shipped ranker does not fit
    ``compiler``'s LLVM (the reason is logged); ``predicted`` named explicitly does not.

    Raises:
        InvalidInput: An unknown name, or ``predicted`` with an LLVM the ranker was not
            trained for.
    """
    if name is None:
        try:
            return make_search(DEFAULT_SEARCH, compiler, seed, max_length)
        except InvalidInput as error:
            logger.warning("The default search is %s search here: %s", FALLBACK_SEARCH, error)
            return make_proposer(FALLBACK_SEARCH, seed, max_length)
    kind, _, argument = name.partition(":")
    if kind == "predicted":
        settings = _predicted_settings(name, argument)
        return predicted_search(
            compiler,
            seed,
            max_length,
            first=settings.get("first", PREDICTED_FIRST),
            warmup=settings.get("warmup", PREDICTED_WARMUP),
        )
    if kind not in SEARCH_NAMES:
        raise InvalidInput(
            f"Unknown search {name!r}: use predicted, local, random, nevergrad or nevergrad:OPTIMIZER."
        )
    return make_proposer(name, seed, max_length)


def _predicted_settings(name: str, argument: str) -> dict[str, int]:
    """``first=N,warmup=W`` of ``predicted:first=N,warmup=W``."""
    settings: dict[str, int] = {}
    for item in filter(None, argument.split(",")):
        key, _, value = item.partition("=")
        if key not in ("first", "warmup") or not value.isdigit():
            raise InvalidInput(
                f"{name!r}: use predicted or predicted:first=N,warmup=W (whole numbers: the predictor's "
                "lists measured first, then the local search's random lists)."
            )
        settings[key] = int(value)
    return settings
