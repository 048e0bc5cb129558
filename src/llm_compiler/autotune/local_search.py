"""Local search: evolve the best lists found so far instead of drawing each list anew.

Random search spends most of its budget far from anything good: a list that beats -Oz
is usually a handful of passes around a ``default<O*>`` pipeline, and a random list
of 25 passes rarely is one. :class:`LocalSearch` starts like random search (list 0
is -Oz, then ``warmup`` random lists) and then mostly proposes *neighbours* of the
best lists measured so far: a parent drawn from the best few (one per measured size,
biased towards the best), changed by one to three moves:

* **insert** a pass drawn from the set at a random position;
* **delete** a pass;
* **replace** a pass by one drawn from the set;
* **swap** two neighbouring passes;
* **crossover**: the start of one parent and the end of another;

and, in the richer search spaces (:mod:`llm_compiler.passes.space`):

* **retune** (spaces with parameters): a pass replaced by another spelling of the same
  pass (``function(sroa)`` -> ``function(sroa<preserve-cfg>)``);
* **group** (spaces with groups): two neighbouring elements of the same pass manager
  joined into one (``function(a),function(b,c)`` -> ``function(a,b,c)``; inside a
  function group, ``loop(x),loop(y)`` -> ``loop(x,y)``), or a function group moved into
  the ``cgscc(...)`` before it, so it runs on each SCC right after its inlining;
* **ungroup**: a group split into one element per pass it holds.

A share of each batch (``explore``, a quarter) is fresh random lists; when the best
size has not improved for ``restart_after`` measurements that share rises to a half
(a restart), so a search stuck around one list looks elsewhere. Lists already measured are never
proposed again. Everything is drawn from a generator seeded by (seed, program id,
index of the batch) and the history the job passes in, so a re-run proposes the same
lists.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.passes.pipeline import PassList, PassNode, join_nodes, joinable, parse_pipeline
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.passes.searchable import PassSet
from llm_compiler.passes.space import has_groups, has_parameters, variants_of
from llm_compiler.selection.proposer import Evaluated, ProposalRequest, Proposer


@dataclass(frozen=True)
class LocalSearch(Proposer):
    """Evolution from the best lists so far, with random restarts (module docstring).

    Args:
        seed: The run's seed.
        max_length: The longest list.
        warmup: Random lists first (-Oz included), before any neighbour.
        parents: How many of the best lists children are drawn from.
        explore: The share of fresh random lists once warm.
        restart_after: Measurements without a new best before the search restarts.
    """

    seed: int = 0
    max_length: int = MAX_LIST_LENGTH
    warmup: int = 40
    parents: int = 8
    explore: float = 0.25
    restart_after: int = 80
    name: str = field(default="local search", init=False)
    adaptive: ClassVar[bool] = True
    batch_size: ClassVar[int] = 10

    def ask(self, request: ProposalRequest) -> list[PassList]:
        rng = random.Random(f"local:{self.seed}:{request.program.id}:{request.start}")
        randoms = RandomSearch(self.seed, self.max_length)
        seen = {item.pipeline for item in request.history}
        ranked = _ranked(request.history)
        explore = 0.5 if _stagnant(request.history) >= self.restart_after else self.explore
        lists: list[PassList] = []
        for index in request.indices:
            if index < self.warmup or not ranked:
                candidate = randoms.candidate(request, index)
            elif rng.random() < explore:
                candidate = randoms.candidate(request, index + rng.randrange(1 << 30))
            else:
                candidate = self._neighbour(rng, ranked, request, seen)
            if candidate.pipeline in seen and index >= self.warmup:
                candidate = self._neighbour(rng, ranked, request, seen) if ranked else candidate
            seen.add(candidate.pipeline)
            lists.append(candidate)
        return lists

    def _neighbour(
        self,
        rng: random.Random,
        ranked: Sequence[tuple[PassNode, ...]],
        request: ProposalRequest,
        seen: set[str],
    ) -> PassList:
        """A list one to three moves away from a parent, not measured before (up to 30 tries)."""
        members = request.pass_set.member_lists
        space = _Space.of(request.pass_set)
        top = ranked[: self.parents]
        child: list[PassNode] = []
        for _ in range(30):
            child = list(top[int(len(top) * rng.random() ** 2)])
            for _ in range(rng.choice((1, 1, 2, 3))):
                child = _move(rng, child, members, top, space)
            child = _within(child, self.max_length) or list(rng.choice(members))
            if str(PassList(child)) not in seen:
                break
        return PassList(child)

    def identity(self) -> dict[str, Any]:
        return {
            "proposer": type(self).__qualname__,
            "seed": self.seed,
            "max_length": self.max_length,
            "warmup": self.warmup,
            "parents": self.parents,
            "explore": self.explore,
            "restart_after": self.restart_after,
        }


def _ranked(history: Sequence[Evaluated]) -> list[tuple[PassNode, ...]]:
    """One list per measured size, smallest first (the shortest list of each size), so
    that parents differ in what they do, not only in how they are written."""
    ok = sorted(
        (item for item in history if item.ok and item.size is not None),
        key=lambda item: (item.size, len(item.pipeline), item.pipeline),
    )
    seen: set[int | None] = set()
    ranked = []
    for item in ok:
        if item.size not in seen:
            seen.add(item.size)
            ranked.append(tuple(parse_pipeline(item.pipeline)))
    return ranked


def _stagnant(history: Sequence[Evaluated]) -> int:
    """Measurements since the best size last improved."""
    best, since = None, 0
    for item in history:
        if item.ok and item.size is not None and (best is None or item.size < best):
            best, since = item.size, 0
        else:
            since += 1
    return since


@dataclass(frozen=True)
class _Space:
    """What the moves may do in a pass set's search space."""

    variants: dict[str, tuple[PassList, ...]]
    groups: bool

    @staticmethod
    @functools.lru_cache(maxsize=8)
    def of(pass_set: PassSet) -> _Space:
        variants = variants_of(pass_set) if has_parameters(pass_set.space) else {}
        return _Space(variants, has_groups(pass_set.space))


def _within(nodes: list[PassNode], max_length: int) -> list[PassNode]:
    """``nodes`` cut to ``max_length`` passes (counted inside groups too)."""
    kept: list[PassNode] = []
    total = 0
    for node in nodes:
        total += sum(1 for _ in node.leaves())
        if total > max_length:
            break
        kept.append(node)
    return kept


def _single_leaf(node: PassNode) -> str | None:
    leaves = list(node.leaves())
    return leaves[0].name if len(leaves) == 1 else None


def _group_moves(nodes: list[PassNode], space: _Space) -> list[str]:
    moves = []
    if space.variants and any(_single_leaf(node) in space.variants for node in nodes):
        moves.append("retune")
    if space.groups:
        if any(joinable(a, b) for a, b in itertools.pairwise(nodes)):
            moves.append("group")
        if any(node.children is not None and len(node.children) > 1 for node in nodes):
            moves.append("ungroup")
    return moves


def _structural_move(rng: random.Random, move: str, nodes: list[PassNode], space: _Space) -> list[PassNode]:
    """A retune, group or ungroup move (``move`` is one :func:`_group_moves` offered)."""
    if move == "retune":
        sites = [i for i, node in enumerate(nodes) if _single_leaf(node) in space.variants]
        position = rng.choice(sites)
        name = _single_leaf(nodes[position])
        assert name is not None
        others = [v for v in space.variants[name] if str(v) != str(nodes[position])]
        return nodes[:position] + list(rng.choice(others)) + nodes[position + 1 :]
    if move == "group":
        sites = [i for i in range(len(nodes) - 1) if joinable(nodes[i], nodes[i + 1])]
        position = rng.choice(sites)
        return [*nodes[:position], join_nodes(nodes[position], nodes[position + 1]), *nodes[position + 2 :]]
    sites = [i for i, node in enumerate(nodes) if node.children is not None and len(node.children) > 1]
    position = rng.choice(sites)
    group = nodes[position]
    assert group.children is not None
    split = [PassNode(group.name, group.params, (child,)) for child in group.children]
    return nodes[:position] + split + nodes[position + 1 :]


def _move(
    rng: random.Random,
    nodes: list[PassNode],
    members: Sequence[PassList],
    parents: Sequence[tuple[PassNode, ...]],
    space: _Space | None = None,
) -> list[PassNode]:
    """One random move (insert, delete, replace, swap or crossover, and in richer spaces
    retune, group or ungroup) on ``nodes``."""
    moves = ["insert", "replace", "crossover"] + (["delete", "swap"] if len(nodes) > 1 else [])
    structural = _group_moves(nodes, space) if space is not None else []
    # The richer moves get as much weight together as the plain ones.
    if structural and space is not None and rng.random() < 0.5:
        return _structural_move(rng, rng.choice(structural), nodes, space)
    move = rng.choice(moves)
    position = rng.randrange(len(nodes) + (move == "insert")) if nodes else 0
    if move == "insert" or not nodes:
        return nodes[:position] + list(rng.choice(members)) + nodes[position:]
    if move == "delete":
        return nodes[:position] + nodes[position + 1 :]
    if move == "replace":
        return nodes[:position] + list(rng.choice(members)) + nodes[position + 1 :]
    if move == "swap":
        position = min(position, len(nodes) - 2)
        return [*nodes[:position], nodes[position + 1], nodes[position], *nodes[position + 2 :]]
    other = list(rng.choice(parents))
    cut = rng.randrange(len(other) + 1)
    return nodes[:position] + other[cut:]
