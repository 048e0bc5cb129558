"""The rankers the predictor can learn, and how each is judged: by leaving packages out.

Every ranker orders a fixed set of candidate lists for a unit from its IR features
(log-scaled). What counts is the best of the first k lists measured, with -Oz as backup,
and whether the first list alone beats -Oz (zero-shot), on units of packages the ranker
never saw. So every learner is judged the same way: each training package is held out in
turn, the candidates are chosen and the ranker trained on the others alone, and the held-
out units are ranked; :func:`held_out` gives the mean best-of-k gain (k = 1, 3, 10), the
total bytes saved, and the first list's mean gain without backup.

The learners:

* ``frequency``: the candidates most often the best of a training unit, whatever the unit
  (no learning; the ``common:N`` baseline).
* ``coverage``: the candidates that together gain most over the training units, whatever
  the unit (no learning).
* ``neighbours``: the nearest training units' best sets (:class:`NearestSets`).
* ``boosted``: gradient-boosted trees predicting each candidate's gain on the unit from the
  unit's features and the candidate (:class:`Boosted`, objective ``regression``); its
  predictions are also the **gauge** of the adaptive default (how many lists are worth
  measuring on a unit, none included).
* ``boosted-rank``: the same trees trained with a listwise ranking loss (LambdaRank) on
  graded relevance (how close each candidate comes to the unit's best).

Each is also judged with the **safe list** first (``+safe-first``, :class:`SafeFirst`):
the candidate whose worst training package gains most on average. The lists that are most
often the best are also those that lose most where they do not fit, so the first list
alone is often worse than -Oz on average; the safe one is not, at the cost of k = 1.

Candidates are chosen from the table's pool greedily for **coverage of packages**: each
step takes the list that adds most to the mean over packages of each package's mean best
gain, so a package with many units does not choose for all.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from llm_compiler.predictor.trees import TreeEnsemble, train_lightgbm

#: The k of the held-out figures.
TOP_K = (1, 3, 10)
#: The gain a failed compile counts as (a list that does not build is worse than -Oz).
FAILED_GAIN = -0.1
#: Gains below this count as this in the regression target. With -Oz as backup a list
#: larger than -Oz costs nothing but its compile, so the regression learns each list's
#: upside: a target with the losses in it ranks safe lists with small gains first, and
#: held out those lose to the most frequent lists at every k.
GAIN_FLOOR = 0.0
#: Nearest-neighbour settings tried: (neighbours, prior, target).
NEIGHBOUR_GRID = tuple((n, 0.0, t) for n in (5, 20, 40) for t in ("gain", "share"))
#: Boosting rounds tried.
ROUNDS = (100, 300)


class Model(Protocol):
    """A trained ranker's model: orders candidates for a unit's log-scaled features."""

    def order(self, features: Any) -> list[int]: ...

    def predicted_gains(self, features: Any) -> Any | None: ...

    def to_json(self) -> dict[str, Any]: ...

    def subset(self, kept: Sequence[int]) -> Model: ...


def log_scaled(features: Any) -> Any:
    """The features as the learners see them: log(1 + x) of each count."""
    return np.log1p(np.maximum(np.asarray(features, dtype=np.float64), 0.0))


def gain_matrix(oz: Sequence[int], sizes: Sequence[Sequence[int | None]]) -> Any:
    """log(-Oz size / size) per unit and candidate (``FAILED_GAIN`` where it failed)."""
    return np.asarray(
        [
            [math.log(o / s) if s is not None and s > 0 else FAILED_GAIN for s in row]
            for o, row in zip(oz, sizes, strict=True)
        ],
        dtype=np.float64,
    )


def choose_candidates(gains: Any, groups: Any, count: int) -> list[int]:
    """``count`` columns of ``gains`` chosen greedily for coverage of packages (module docstring).

    Columns that add nothing follow by how many units they are the best of. Ties go to the
    earlier column.
    """
    positive = np.maximum(gains, 0.0)
    labels = np.unique(groups)
    weight = np.zeros(len(gains))
    for label in labels:
        members = groups == label
        weight[members] = 1.0 / (members.sum() * len(labels))
    chosen = _greedy_picks(weight, positive, count)
    wins = np.bincount(positive.argmax(axis=1)[positive.max(axis=1) > 0], minlength=gains.shape[1])
    rest = sorted((k for k in range(gains.shape[1]) if k not in chosen), key=lambda k: (-wins[k], k))
    return chosen + rest[: count - len(chosen)]


def _greedy_picks(weights: Any, targets: Any, count: int) -> list[int]:
    """Up to ``count`` columns, each adding the most weighted gain over those taken, until
    none adds anything (ties: the earlier column)."""
    best = np.zeros(len(weights))
    taken = np.zeros(targets.shape[1], dtype=bool)
    order: list[int] = []
    while len(order) < min(count, targets.shape[1]):
        added = (weights[:, None] * np.maximum(0.0, targets - best[:, None])).sum(axis=0)
        added[taken] = -1.0
        pick = int(np.argmax(added))
        if added[pick] <= 1e-12:
            break
        order.append(pick)
        taken[pick] = True
        best = np.maximum(best, targets[:, pick])
    return order


def greedy_sets(weights: Any, targets: Any, count: int) -> list[int]:
    """Candidates taken one at a time by weighted gain added; then by weighted mean gain."""
    weighted = weights > 0
    if not weighted.all():  # units of no weight add nothing: leave them out of every step
        weights, targets = weights[weighted], targets[weighted]
    order = _greedy_picks(weights, targets, count)
    mean = (weights[:, None] * targets).sum(axis=0)
    rest = sorted((k for k in range(targets.shape[1]) if k not in order), key=lambda k: (-mean[k], k))
    return (order + rest)[:count]


def _share(gains: Any) -> Any:
    positive = np.maximum(gains, 0.0)
    best = positive.max(axis=1, keepdims=True)
    return np.divide(positive, best, out=np.zeros_like(positive), where=best > 0)


@dataclass(frozen=True)
class FixedOrder:
    """One order for every unit (the unlearned baselines)."""

    ranked: tuple[int, ...]
    kind: str = "fixed"

    def order(self, features: Any) -> list[int]:
        return list(self.ranked)

    def predicted_gains(self, features: Any) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "order": list(self.ranked)}

    def subset(self, kept: Sequence[int]) -> FixedOrder:
        where = {old: new for new, old in enumerate(kept)}
        return FixedOrder(tuple(where[k] for k in self.ranked if k in where), self.kind)


def by_frequency(gains: Any) -> FixedOrder:
    """The candidates most often the best of a unit first."""
    positive = np.maximum(gains, 0.0)
    wins = np.bincount(positive.argmax(axis=1)[positive.max(axis=1) > 0], minlength=gains.shape[1])
    return FixedOrder(tuple(sorted(range(gains.shape[1]), key=lambda k: (-wins[k], k))))


def by_coverage(gains: Any) -> FixedOrder:
    """The candidates that together gain most first."""
    return FixedOrder(tuple(greedy_sets(np.ones(len(gains)), np.maximum(gains, 0.0), gains.shape[1])))


def safe_list(gains: Any, groups: Any) -> int:
    """The candidate whose worst package gains most on average (losses floored at -1 each):
    the list to try first when the first list alone must not be worse than -Oz."""
    floored = np.maximum(gains, -1.0)
    worst = np.min([floored[groups == label].mean(axis=0) for label in np.unique(groups)], axis=0)
    return int(np.argmax(worst))


@dataclass(frozen=True)
class SafeFirst:
    """Another model's order with one safe list (:func:`safe_list`) moved first."""

    inner: Model
    safe: int
    kind: str = "safe-first"

    def order(self, features: Any) -> list[int]:
        return [self.safe, *(k for k in self.inner.order(features) if k != self.safe)]

    def predicted_gains(self, features: Any) -> Any | None:
        return self.inner.predicted_gains(features)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "safe": self.safe, "inner": self.inner.to_json()}

    def subset(self, kept: Sequence[int]) -> Model:
        inner = self.inner.subset(kept)
        return SafeFirst(inner, list(kept).index(self.safe)) if self.safe in kept else inner


@dataclass(frozen=True)
class NearestSets:
    """The nearest training units' best sets (the weights and greedy choice of the
    ranker's first version: ``neighbours`` nearest units weigh 1/neighbours each, plus
    ``prior`` spread over all; ``target`` ``share`` counts each unit's gains as shares of
    its best)."""

    center: tuple[float, ...]
    scale: tuple[float, ...]
    points: tuple[tuple[float, ...], ...]
    gains: tuple[tuple[float, ...], ...]
    neighbours: int
    prior: float
    target: str
    kind: str = "nearest-neighbour-sets"

    @property
    def _arrays(self) -> tuple[Any, ...]:
        cached = self.__dict__.get("_cached")
        if cached is None:
            gains = np.asarray(self.gains, dtype=np.float64)
            targets = _share(gains) if self.target == "share" else np.maximum(gains, 0.0)
            cached = (
                np.asarray(self.points, dtype=np.float64),
                targets,
                np.asarray(self.center, dtype=np.float64),
                np.asarray(self.scale, dtype=np.float64),
            )
            object.__setattr__(self, "_cached", cached)
        return cached

    def order(self, features: Any) -> list[int]:
        points, targets, center, scale = self._arrays
        query = (np.asarray(features, dtype=np.float64) - center) / scale
        distances = np.sqrt(((points - query[None, :]) ** 2).sum(axis=1))
        weights = np.full(len(points), self.prior / len(points))
        nearest = np.argsort(distances, kind="stable")[: min(self.neighbours, len(points))]
        weights[nearest] += 1.0 / len(nearest)
        return greedy_sets(weights, targets, targets.shape[1])

    def predicted_gains(self, features: Any) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "neighbours": self.neighbours,
            "prior": self.prior,
            "target": self.target,
            "center": [_round(x) for x in self.center],
            "scale": [_round(x) for x in self.scale],
            "points": [[_round(x) for x in row] for row in self.points],
            "gains": [[_round(x) for x in row] for row in self.gains],
        }

    def subset(self, kept: Sequence[int]) -> NearestSets:
        return NearestSets(
            self.center,
            self.scale,
            self.points,
            tuple(tuple(row[k] for k in kept) for row in self.gains),
            self.neighbours,
            self.prior,
            self.target,
        )

    @classmethod
    def train(cls, raw: Any, gains: Any, setting: tuple[int, float, str]) -> NearestSets:
        center = raw.mean(axis=0)
        scale = raw.std(axis=0)
        scale[scale < 1e-9] = 1.0
        points = (raw - center) / scale
        return cls(
            tuple(float(x) for x in center),
            tuple(float(x) for x in scale),
            tuple(tuple(float(x) for x in row) for row in points),
            tuple(tuple(float(x) for x in row) for row in np.maximum(gains, 0.0)),
            setting[0],
            setting[1],
            setting[2],
        )


@dataclass(frozen=True)
class Boosted:
    """Boosted trees scoring each candidate for a unit (module docstring).

    Attributes:
        trees: The ensemble; its inputs are the unit's log-scaled features, then the
            candidate's index (``candidates[k]`` for the ranker's candidate ``k``).
        candidates: Each candidate's index in the trees' training.
        objective: ``regression`` (scores are predicted gains) or ``lambdarank``.
        rounds: Trees trained.
    """

    trees: TreeEnsemble
    candidates: tuple[int, ...]
    objective: str
    rounds: int
    kind: str = "boosted-trees"

    def scores(self, features: Any) -> Any:
        features = np.asarray(features, dtype=np.float64)
        rows = np.empty((len(self.candidates), len(features) + 1))
        rows[:, :-1] = features[None, :]
        rows[:, -1] = self.candidates
        return self.trees.predict(rows)

    def order(self, features: Any) -> list[int]:
        scores = self.scores(features)
        return [int(k) for k in np.lexsort((np.arange(len(scores)), -np.round(scores, 12)))]

    def predicted_gains(self, features: Any) -> Any | None:
        return self.scores(features) if self.objective == "regression" else None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "objective": self.objective,
            "rounds": self.rounds,
            "candidates": list(self.candidates),
            "trees": self.trees.to_json(),
        }

    def subset(self, kept: Sequence[int]) -> Boosted:
        return Boosted(self.trees, tuple(self.candidates[k] for k in kept), self.objective, self.rounds)

    @classmethod
    def train(cls, raw: Any, gains: Any, objective: str, rounds: int) -> Boosted:
        units, count = gains.shape
        rows = np.empty((units * count, raw.shape[1] + 1))
        rows[:, :-1] = np.repeat(raw, count, axis=0)
        rows[:, -1] = np.tile(np.arange(count), units)
        if objective == "regression":
            labels = np.maximum(gains, GAIN_FLOOR).ravel()
            groups = None
        else:
            labels = relevance(gains).ravel()
            groups = [count] * units
        trees = train_lightgbm(
            rows, labels, objective=objective, rounds=rounds, categorical=raw.shape[1], groups=groups
        )
        return cls(trees, tuple(range(count)), objective, rounds)


def relevance(gains: Any) -> Any:
    """Grades 0..4 of each candidate for ranking losses: 0 not smaller than -Oz, else by its
    share of the unit's best gain (4: within 5% of it)."""
    share = _share(gains)
    grades = np.zeros_like(share, dtype=np.int64)
    for grade, floor in enumerate((1e-9, 0.5, 0.8, 0.95), 1):
        grades[share > floor if grade == 1 else share >= floor] = grade
    return grades


@dataclass(frozen=True)
class Learner:
    """A way of training a model on units (raw log-scaled features, gains)."""

    name: str
    train: Callable[[Any, Any], Model]


def _neighbours(raw: Any, gains: Any, setting: tuple[int, float, str]) -> Model:
    return NearestSets.train(raw, gains, setting)


def _boosted(raw: Any, gains: Any, objective: str, rounds: int) -> Model:
    return Boosted.train(raw, gains, objective, rounds)


def learners(boosted: bool = True) -> list[Learner]:
    """Every learner and setting :func:`held_out` tries (boosted ones only with LightGBM),
    the smallest models first: the unlearned orders, the trees, then the nearest neighbours
    (whose file holds every training unit)."""
    found: list[Learner] = [
        Learner("frequency", lambda raw, gains: by_frequency(gains)),
        Learner("coverage", lambda raw, gains: by_coverage(gains)),
    ]
    if boosted:
        for rounds in ROUNDS:
            for objective, name in (("regression", "boosted"), ("lambdarank", "boosted-rank")):
                found.append(
                    Learner(
                        f"{name}:{rounds}", functools.partial(_boosted, objective=objective, rounds=rounds)
                    )
                )
    for setting in NEIGHBOUR_GRID:
        name = "neighbours:{},{},{}".format(*setting)
        found.append(Learner(name, functools.partial(_neighbours, setting=setting)))
    return found


#: What the name of a learner's order with the safe list first ends with (:class:`SafeFirst`).
SAFE = "+safe-first"
#: The learner whose predicted gains decide how many lists are worth measuring.
GAUGE = f"boosted:{ROUNDS[0]}"


def held_out(
    raw: Any,
    gains: Any,
    groups: Any,
    oz: Any,
    candidates: int,
    chosen: Sequence[Learner],
    stops: Sequence[float] = (),
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, dict[str, float]]]]:
    """Each learner's figures with each package held out in turn (module docstring).

    Args:
        raw: Units' log-scaled features. gains: Units by pool lists (:func:`gain_matrix`).
        groups: Each unit's package. oz: Each unit's -Oz size.
        candidates: Candidates chosen from the pool on the training packages.
        chosen: The learners.
        stops: Thresholds of predicted gain for the adaptive curves.

    Returns:
        Per learner, and per learner with the safe list first (its name and
        :data:`SAFE`): ``top_1``, ``top_3``, ``top_10`` (geomean % below -Oz of the best of
        the first k, -Oz as backup), ``total_10`` (% of all bytes, k = 10), ``first``
        (geomean % of the first list alone, no backup) and ``oracle`` (the best candidate).
        Then, when the learners include :data:`GAUGE`, per order and threshold: the
        order's first 10 lists that the gauge predicts to gain at least the threshold
        (none, where none is: the unit keeps -Oz at no compile; with the safe list first,
        that list and those of the others), as ``lists`` (mean lists measured), ``gain``
        (geomean % below -Oz of their best) and ``first`` (of the first of them alone,
        -Oz where there is none).
    """
    keys = ("top_1", "top_3", "top_10", "first", "oracle")
    names = [name for learner in chosen for name in (learner.name, learner.name + SAFE)]
    sums = {name: dict.fromkeys(keys, 0.0) for name in names}
    saved = dict.fromkeys(names, 0.0)
    curves: dict[str, dict[float, list[float]]] = {}
    for label in np.unique(groups):
        train, test = groups != label, groups == label
        columns = choose_candidates(gains[train], groups[train], candidates)
        train_gains = gains[train][:, columns]
        models = {learner.name: learner.train(raw[train], train_gains) for learner in chosen}
        gauge = models.get(GAUGE)
        safe = safe_list(train_gains, groups[train])
        for unit in np.flatnonzero(test):
            unit_gains = gains[unit, columns]
            predicted = gauge.predicted_gains(raw[unit]) if gauge is not None and stops else None
            for name, model in models.items():
                ranked = model.order(raw[unit])
                safe_first = [safe, *(k for k in ranked if k != safe)]
                for label, order in ((name, ranked), (name + SAFE, safe_first)):
                    figures = sums[label]
                    for k in TOP_K:
                        figures[f"top_{k}"] += max(0.0, float(unit_gains[order[:k]].max()))
                    figures["first"] += float(unit_gains[order[0]])
                    figures["oracle"] += max(0.0, float(unit_gains.max()))
                    saved[label] += oz[unit] * (1 - math.exp(-max(0.0, float(unit_gains[order[:10]].max()))))
                if predicted is None:
                    continue
                for stop in stops:
                    for label, worth in (
                        (name, [k for k in ranked[:10] if predicted[k] >= stop]),
                        (name + SAFE, [safe, *(k for k in safe_first[1:10] if predicted[k] >= stop)]),
                    ):
                        point = curves.setdefault(label, {}).setdefault(stop, [0.0, 0.0, 0.0])
                        point[0] += len(worth)
                        point[1] += max(0.0, float(unit_gains[worth].max())) if worth else 0.0
                        point[2] += float(unit_gains[worth[0]]) if worth else 0.0
    units = len(groups)
    total = float(np.sum(oz))
    figures_out = {
        name: {
            **{key: _percent(value / units) for key, value in figures.items()},
            "total_10": round(100 * saved[name] / total, 3),
        }
        for name, figures in sums.items()
    }
    curves_out = {
        name: {
            str(stop): {
                "lists": round(lists / units, 2),
                "gain": _percent(gain / units),
                "first": _percent(first / units),
            }
            for stop, (lists, gain, first) in curve.items()
        }
        for name, curve in curves.items()
    }
    return figures_out, curves_out


def _percent(mean_gain: float) -> float:
    return round(100 * (1 - math.exp(-mean_gain)), 3)


def _round(value: float) -> float:
    return float(f"{value:.6g}")
