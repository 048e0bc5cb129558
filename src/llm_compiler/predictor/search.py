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
(:func:`llm_compiler.predictor.ranker.load` checks it). In ``tune`` this search is
``builtin`` (``predicted``, its earlier name, still works), made by
:func:`llm_compiler.predictor.proposer.builtin`; :func:`make_search` reads ``--search``
through the registry (:mod:`llm_compiler.selection.registry`), and the default search,
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
from llm_compiler.autotune.strategies import DEFAULT_SEARCH as FALLBACK_SEARCH
from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.passes.searchable import PassSet
from llm_compiler.predictor.ranker import Ranker, load
from llm_compiler.predictor.shipped import ranker_file
from llm_compiler.selection.proposer import ProposalRequest, Proposer, first_then
from llm_compiler.selection.registry import ProposerContext, make_proposer

logger = logging.getLogger(__name__)

#: The default search, chosen by measurement on held-out units (docs/benchmarks.md).
DEFAULT_SEARCH = "builtin"
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
    """The search a spec names (:mod:`llm_compiler.selection.registry`); None is the default.

    The default, :data:`DEFAULT_SEARCH` (the built-in predictor's lists, then local
    search), falls back to local search where the shipped ranker does not fit
    ``compiler``'s LLVM (the reason is logged); ``builtin`` named explicitly does not.

    Raises:
        InvalidInput: An unknown or malformed spec, or ``builtin`` with an LLVM the ranker
            was not trained for.
    """
    context = ProposerContext(compiler, "search", seed, max_length)
    if name is None:
        try:
            return make_proposer(DEFAULT_SEARCH, context)[0]
        except InvalidInput as error:
            logger.warning("The default search is %s search here: %s", FALLBACK_SEARCH, error)
            return LocalSearch(seed, max_length)
    return make_proposer(name, context)[0]
