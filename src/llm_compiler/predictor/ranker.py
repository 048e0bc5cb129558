"""The learned ranker: which of the candidate lists to try first on a unit never seen.

What counts for a unit is the best of the k lists measured, not each list's own score,
so the ranker chooses a *set*: the lists that together do best on training units like
this one. A new unit's IR features (log-scaled, standardized as in training) find its
``neighbours`` closest training units; each training unit gets a weight (1/neighbours
for the nearest, plus ``prior`` spread over all of them, so a unit unlike any seen is
treated as the average unit); the candidates are then taken greedily, each adding the
most weighted gain over the lists already taken (gain: log(-Oz size / size), or with
``target = "share"`` that gain as a share of the unit's best, so that every unit counts
alike). Once nothing adds, the rest follow by weighted mean gain. Ties go to the
earlier candidate, so the ranking is deterministic.

Its settings (neighbours, prior, target) are chosen by :func:`fit` on held-out
packages: each package in turn is left out, ranked from the others alone, and the
settings whose top 1, 3 and 10 lists do best on it together win. The manifest keeps
those figures beside the unlearned orders' (by frequency, by coverage) computed the
same way. It needs numpy only, loads in milliseconds, ranks a unit in about a
millisecond, and its file is plain JSON (no pickle: loading runs no code).

The file records what it was trained for: the LLVM major version, a hash of that
LLVM's searchable pass set, the feature version, the training packages. :func:`load`
refuses a file made for another LLVM or pass set, naming the retraining command.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text
from llm_compiler.predictor.dataset import TrainingData
from llm_compiler.predictor.features import FEATURE_NAMES, FEATURE_VERSION, ir_features

#: The file format; a change that old readers cannot read bumps it.
FORMAT = 1
#: Candidates the held-out figures and the default proposal use.
TOP_K = (1, 3, 10)
#: Settings tried by :func:`fit`: (neighbours, prior, target).
GRID = tuple((n, p, t) for n in (5, 10, 20, 40) for p in (0.0, 0.5, 2.0, 4.0) for t in ("gain", "share"))
RETRAIN = (
    "llm-compiler predictor train --tuning RUN... --out DIR (RUN: `llm-compiler tune PROGRAMS --out RUN`)"
)


@dataclass(frozen=True)
class Ranker:
    """A trained ranker (see the module docstring).

    Attributes:
        pipelines: The candidate lists, exact ``opt -passes=`` texts.
        frequency: Training units that kept each candidate after tuning (the unlearned order).
        center, scale: Standardization of the log-scaled features.
        points: The training units' standardized features.
        gains: ``gains[u][k]``: log(-Oz size / size) of unit ``u`` under candidate ``k``
            (0 when not smaller or failed).
        neighbours: Training units that weigh most for a unit.
        prior: Weight spread over all training units.
        target: ``gain`` or ``share`` (see the module docstring).
        manifest: What it was trained on and for, and its held-out figures.
    """

    pipelines: tuple[str, ...]
    frequency: tuple[int, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    points: tuple[tuple[float, ...], ...]
    gains: tuple[tuple[float, ...], ...]
    neighbours: int
    prior: float
    target: str
    manifest: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @functools.cached_property
    def _arrays(self) -> tuple[Any, ...]:
        """(points, targets, center, scale) as arrays, made on first use."""
        gains = np.asarray(self.gains, dtype=np.float64)
        return (
            np.asarray(self.points, dtype=np.float64),
            _targets(gains, self.target),
            np.asarray(self.center, dtype=np.float64),
            np.asarray(self.scale, dtype=np.float64),
        )

    def order(self, features: Sequence[float]) -> list[int]:
        """Candidate indices for a unit with these IR features, best first."""
        points, targets, center, scale = self._arrays
        query = (_log_scaled(np.asarray(features, dtype=np.float64)) - center) / scale
        weights = _weights(points, query, self.neighbours, self.prior)
        return _greedy(weights, targets, len(self.pipelines))

    def rank(self, ir: str) -> list[str]:
        """The candidates for a unit's unoptimized IR, best first."""
        return [self.pipelines[k] for k in self.order(ir_features(ir))]

    def by_frequency(self) -> list[str]:
        """The candidates most often kept in training first (no learning)."""
        order = sorted(range(len(self.pipelines)), key=lambda k: (-self.frequency[k], k))
        return [self.pipelines[k] for k in order]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "manifest": self.manifest,
            "model": {
                "kind": "nearest-neighbour-sets",
                "neighbours": self.neighbours,
                "prior": self.prior,
                "target": self.target,
            },
            "pipelines": list(self.pipelines),
            "frequency": list(self.frequency),
            "center": [_round(x) for x in self.center],
            "scale": [_round(x) for x in self.scale],
            "points": [[_round(x) for x in row] for row in self.points],
            "gains": [[_round(x) for x in row] for row in self.gains],
        }

    def save(self, path: Path) -> Path:
        """Writes the ranker as JSON (the same ranker always gives the same bytes)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return atomic_write_text(path, text + "\n")


def pass_set_hash(compiler: Compiler) -> str:
    """A short hash of the installed LLVM's searchable pass set."""
    return hashlib.sha256("\n".join(compiler.pass_set.members).encode()).hexdigest()[:16]


def load(path: Path, compiler: Compiler | None = None) -> Ranker:
    """Reads a ranker; with ``compiler``, checks it was trained for that LLVM and pass set.

    Raises:
        InvalidInput: Not a ranker file, another format, or trained for another LLVM
            major version, pass set or feature version.
    """
    try:
        record = json.loads(path.read_text())
        manifest = record["manifest"]
        model = record["model"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInput(f"{path}: not a predictor file ({error}). Make one with: {RETRAIN}") from error
    if record.get("format") != FORMAT or model.get("kind") != "nearest-neighbour-sets":
        raise InvalidInput(
            f"{path}: a predictor file of format {record.get('format')}, not {FORMAT}: {RETRAIN}"
        )
    if manifest.get("feature_version") != FEATURE_VERSION:
        raise InvalidInput(
            f"{path}: trained on features of version {manifest.get('feature_version')}, this llm-compiler "
            f"computes version {FEATURE_VERSION}; retrain: {RETRAIN}"
        )
    if compiler is not None:
        major = int(compiler.llvm_version.split(".")[0])
        if manifest.get("llvm_major") != major:
            raise InvalidInput(
                f"{path}: trained for LLVM {manifest.get('llvm_major')}, but LLVM {compiler.llvm_version} is "
                f"in use; its lists and sizes do not carry over. Tune with this LLVM and retrain: {RETRAIN}"
            )
        if manifest.get("pass_set") != pass_set_hash(compiler):
            raise InvalidInput(
                f"{path}: trained for another searchable pass set (hash {manifest.get('pass_set')}, this "
                f"LLVM's is {pass_set_hash(compiler)}); retrain: {RETRAIN}"
            )
    return Ranker(
        tuple(record["pipelines"]),
        tuple(record["frequency"]),
        tuple(record["center"]),
        tuple(record["scale"]),
        tuple(tuple(row) for row in record["points"]),
        tuple(tuple(row) for row in record["gains"]),
        int(model["neighbours"]),
        float(model["prior"]),
        str(model["target"]),
        manifest,
    )


def fit(data: TrainingData, compiler: Compiler) -> Ranker:
    """Trains a ranker on ``data``, choosing its settings on held-out packages.

    Every package is held out in turn (the units of the others train); the settings
    whose top 1, 3 and 10 lists gain most on the held-out units, summed, win (ties: fewer
    neighbours, less prior, then ``gain``). The figures of the winner and of the
    unlearned orders, computed the same way, go into the manifest.

    Raises:
        InvalidInput: Fewer than two packages or no candidate.
    """
    packages = sorted({unit.package for unit in data.units})
    if len(packages) < 2 or not data.pipelines:
        raise InvalidInput(
            f"The tuning runs give {len(packages)} package(s) and {len(data.pipelines)} candidate list(s); "
            "a predictor needs units of at least two packages (it is checked on each package held out) "
            "and lists that beat -Oz. Tune more programs."
        )
    raw = _log_scaled(np.asarray([u.features for u in data.units], dtype=np.float64))
    units, candidates = len(data.units), len(data.pipelines)
    gains = np.asarray([[data.gain(u, k) for k in range(candidates)] for u in range(units)])
    groups = np.asarray([packages.index(u.package) for u in data.units])
    held_out = {setting: _held_out(raw, gains, groups, _nearest_sets(setting)) for setting in GRID}
    best = max(GRID, key=lambda s: (round(sum(held_out[s].values()), 9), -s[0], -s[1], s[2] == "gain"))
    center, scale = _standardization(raw)
    manifest = {
        "llvm_version": compiler.llvm_version,
        "llvm_major": int(compiler.llvm_version.split(".")[0]),
        "pass_set": pass_set_hash(compiler),
        "feature_version": FEATURE_VERSION,
        "features": len(FEATURE_NAMES),
        "training": data.provenance,
        "held_out": {
            "how": "each package held out in turn, ranked from the others alone; mean over units of "
            "log(-Oz size / best size among the top k), measured before validation, shown as 1 - exp(-mean)",
            "chosen": {"neighbours": best[0], "prior": best[1], "target": best[2]},
            "predictor": _percentages(held_out[best]),
            "by_frequency": _percentages(_held_out(raw, gains, groups, _by_frequency)),
            "by_coverage": _percentages(_held_out(raw, gains, groups, _by_coverage)),
            "oracle": _percentages({k: float(gains.max(axis=1).mean()) for k in TOP_K}),
            "grid": {",".join(map(str, s)): _percentages(held_out[s]) for s in GRID},
        },
    }
    return Ranker(
        data.pipelines,
        data.frequency,
        tuple(float(x) for x in center),
        tuple(float(x) for x in scale),
        tuple(tuple(float(x) for x in row) for row in (raw - center) / scale),
        tuple(tuple(float(x) for x in row) for row in gains),
        best[0],
        best[1],
        best[2],
        manifest,
    )


def _targets(gains: Any, target: str) -> Any:
    """What the greedy choice sums: the gains, or each unit's gains as shares of its best."""
    if target == "gain":
        return gains
    best = gains.max(axis=1, keepdims=True)
    return np.divide(gains, best, out=np.zeros_like(gains), where=best > 0)


def _log_scaled(features: Any) -> Any:
    return np.log1p(np.maximum(features, 0.0))


def _standardization(raw: Any) -> tuple[Any, Any]:
    center = raw.mean(axis=0)
    scale = raw.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return center, scale


def _weights(points: Any, query: Any, neighbours: int, prior: float) -> Any:
    """Each training unit's weight for a unit at ``query`` (module docstring)."""
    distances = np.sqrt(((points - query[None, :]) ** 2).sum(axis=1))
    weights = np.full(len(points), prior / len(points))
    nearest = np.argsort(distances, kind="stable")[: min(neighbours, len(points))]
    weights[nearest] += 1.0 / len(nearest)
    return weights


def _greedy(weights: Any, targets: Any, count: int) -> list[int]:
    """Candidates taken one at a time by weighted gain added; then by weighted mean gain."""
    best = np.zeros(len(weights))
    taken = np.zeros(targets.shape[1], dtype=bool)
    order: list[int] = []
    while len(order) < count:
        added = (weights[:, None] * np.maximum(0.0, targets - best[:, None])).sum(axis=0)
        added[taken] = -1.0
        pick = int(np.argmax(added))
        if added[pick] <= 1e-12:
            break
        order.append(pick)
        taken[pick] = True
        best = np.maximum(best, targets[:, pick])
    mean = (weights[:, None] * targets).sum(axis=0)
    rest = sorted((k for k in range(targets.shape[1]) if not taken[k]), key=lambda k: (-mean[k], k))
    return (order + rest)[:count]


#: A ranking made from training units (standardized features, gains): ranks a unit's features.
Ranking = Callable[[Any, Any], Callable[[Any], list[int]]]


def _held_out(raw: Any, gains: Any, groups: Any, ranking: Ranking) -> dict[int, float]:
    """Mean best-of-top-k gain over units, each ranked with its package held out."""
    totals = dict.fromkeys(TOP_K, 0.0)
    for group in np.unique(groups):
        train, test = groups != group, groups == group
        center, scale = _standardization(raw[train])
        rank = ranking((raw[train] - center) / scale, gains[train])
        for unit in np.where(test)[0]:
            ranked = rank((raw[unit] - center) / scale)
            for k in TOP_K:
                totals[k] += float(gains[unit, ranked[:k]].max())
    return {k: total / len(groups) for k, total in totals.items()}


def _nearest_sets(setting: tuple[int, float, str]) -> Ranking:
    """The predictor's ranking with ``setting`` (neighbours, prior, target)."""
    neighbours, prior, target = setting

    def ranking(points: Any, train_gains: Any) -> Callable[[Any], list[int]]:
        targets = _targets(train_gains, target)
        return lambda query: _greedy(_weights(points, query, neighbours, prior), targets, max(TOP_K))

    return ranking


def _by_frequency(points: Any, train_gains: Any) -> Callable[[Any], list[int]]:
    """The lists most often the best of a training unit first, whatever the unit."""
    best = train_gains.argmax(axis=1)[train_gains.max(axis=1) > 0]
    counts = np.bincount(best, minlength=train_gains.shape[1])
    order = sorted(range(train_gains.shape[1]), key=lambda k: (-counts[k], k))
    return lambda query: order


def _by_coverage(points: Any, train_gains: Any) -> Callable[[Any], list[int]]:
    """The lists that together gain most over the training units first, whatever the unit."""
    order = _greedy(np.ones(len(train_gains)), train_gains, max(TOP_K))
    return lambda query: order


def _percentages(mean_gains: dict[int, float]) -> dict[str, float]:
    return {f"top_{k}": round(100 * (1 - math.exp(-gain)), 3) for k, gain in sorted(mean_gains.items())}


def _round(value: float) -> float:
    return float(f"{value:.6g}")
