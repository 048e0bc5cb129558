"""The interface of anything that proposes pass lists for a program.

Random search (the paper's), local search, a black-box optimizer, a released LLM
Compiler model and the built-in predictor are all *proposers*: asked for ``count``
lists for a program, they answer with pass lists; told the measured outcomes, they may
adjust. The tuner drives any proposer the same way (:mod:`llm_compiler.autotune.jobs`):
it asks in chunks, measures every list with the same compiler, records every
evaluation in the store, and minimization, broadcast and validation then treat the
best lists alike, whoever proposed them. ``optimize``, ``evaluate`` and ``cc`` ask a
proposer for its first k lists of a unit
(:class:`~llm_compiler.models.proposed.ProposerOptimizer`). Either way the lists reach
a kept result only through :class:`~llm_compiler.selection.select.Selector`. Proposers
are named by specs (:mod:`llm_compiler.selection.registry`).

Proposers run inside jobs, in pool or Dask worker processes: they must be picklable,
hashable (frozen dataclasses are both) and deterministic given their settings and the
request, so that a resumed or distributed run proposes the same lists. Each job works
on its own copy.

Two kinds of proposers:

* **non-adaptive** (``adaptive = False``, random search): lists depend on the index
  alone; the budget is cut in chunks, run anywhere in any order, each chunk asked at
  once;
* **adaptive** (``adaptive = True``, local search, black-box optimizers): a program's
  whole search is one job, which asks ``batch_size`` lists at a time, measures them,
  tells the outcomes and passes every measurement so far back in
  :attr:`ProposalRequest.history`. A killed run re-runs the unfinished programs from
  the start with the same seed, so it proposes the same lists.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llm_compiler.core.program import Program
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.searchable import PassSet


@dataclass(frozen=True)
class Evaluated:
    """The measured outcome of one proposed list.

    Attributes:
        pipeline: The exact ``opt -passes=`` text.
        outcome: ``ok``, ``compile-fail``, ``timeout`` or ``invalid`` (refused by the
            pass-list gate).
        size: The value in the run's objective when ``ok``, else None: bytes of
            text + data by default (:mod:`llm_compiler.core.objective`); smaller is better.
    """

    pipeline: str
    outcome: str
    size: int | None

    def __post_init__(self) -> None:
        if (self.outcome == "ok") != (self.size is not None):
            raise ValueError(f"{self.pipeline!r}: a size goes with outcome ok only (got {self.outcome!r})")

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


@dataclass(frozen=True)
class ProposalRequest:
    """What a proposer is asked for.

    Attributes:
        program: The program (its unoptimized IR and stable id).
        pass_set: The searchable pass set lists should be drawn from.
        start: The index of the first list asked for (lists ``start`` to
            ``start + count - 1`` of this program).
        count: How many lists are wanted.
        history: Every list measured for the program so far in this job, in the order
            measured (the -Oz baseline and extra lists first); empty for non-adaptive
            proposers.
    """

    program: Program
    pass_set: PassSet
    start: int
    count: int
    history: tuple[Evaluated, ...] = ()

    def __post_init__(self) -> None:
        if self.start < 0 or self.count < 0:
            raise ValueError(f"start and count must be >= 0 (got start={self.start}, count={self.count})")

    @property
    def indices(self) -> range:
        """The indices of the lists asked for."""
        return range(self.start, self.start + self.count)


class Proposer(abc.ABC):
    """Suggests pass lists for a program (see the module docstring)."""

    #: A short name for progress displays and records, e.g. ``"random search"``.
    name: str = "proposer"
    #: Whether lists depend on earlier outcomes (see the module docstring).
    adaptive: ClassVar[bool] = False
    #: Lists asked at a time by an adaptive proposer's job.
    batch_size: ClassVar[int] = 10

    @abc.abstractmethod
    def ask(self, request: ProposalRequest) -> list[PassList]:
        """Lists ``request.start`` .. ``request.start + request.count - 1`` for the program.

        It may return fewer (a proposer with nothing more to say returns none); lists
        beyond ``request.count`` are ignored.
        """

    def tell(self, program: Program, outcomes: Sequence[Evaluated]) -> None:  # noqa: B027
        """Hears how the lists it proposed for ``program`` did (default: ignores it).

        ``outcomes`` are in the order of the lists asked for (fewer when a time budget
        ran out). They are measured, not yet validated: validation checks only the
        best lists of a program, after the search.
        """

    def identity(self) -> dict[str, Any]:
        """What a resumed run must share with the original to reuse its results.

        The default names the class and ``name``; a proposer with settings of its own
        (a seed, a model, a temperature) adds them, JSON-serializable.
        """
        return {"proposer": type(self).__qualname__, "name": self.name}


def first_then(
    request: ProposalRequest, count: int, first: Callable[[], Sequence[str]], then: Proposer
) -> list[PassList]:
    """Lists 0 to ``count - 1`` from ``first()``, the rest from ``then``.

    ``then`` is asked with its own indices, from 0, and the whole history, so it goes on
    from the outcomes of the first lists. ``first`` is only called when one of its lists is
    asked for. A proposer that starts from known lists (a model's answers, a predictor's
    ranking) is this with its own ``first``.
    """
    proposed: list[PassList] = []
    if request.start < count:
        lists = first()
        proposed = [parse_pipeline(lists[i]) for i in request.indices if i < count]
    rest = request.count - len(proposed)
    if rest > 0:
        inner = ProposalRequest(
            request.program, request.pass_set, max(0, request.start - count), rest, request.history
        )
        proposed += then.ask(inner)[:rest]
    return proposed
