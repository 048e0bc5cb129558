"""Training a ranker: held-out choice of the learner, candidates and the adaptive stop.

:func:`fit` is the training half of :mod:`llm_compiler.predictor.ranker`, apart from it
so that reading and applying a ranker (every cache miss of ``llm-compiler cc``) imports
neither the training data's code nor the tuner it measures with
(:mod:`llm_compiler.predictor.dataset` imports :mod:`llm_compiler.autotune`).
"""

from __future__ import annotations

import numpy as np

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.predictor.dataset import TrainingData
from llm_compiler.predictor.features import FEATURE_NAMES, FEATURE_VERSION
from llm_compiler.predictor.learners import (
    GAUGE,
    SAFE,
    TOP_K,
    SafeFirst,
    choose_candidates,
    gain_matrix,
    held_out,
    learners,
    log_scaled,
    safe_list,
)
from llm_compiler.predictor.ranker import Ranker, pass_set_hash

#: Candidates a ranker keeps from the pool, by default.
CANDIDATES = 64
#: Predicted-gain thresholds tried for adaptive k (log gain; 0.001 is about 0.1%).
STOP_GRID = (-0.01, 0.0, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032)
#: Held-out figures (the sum of the three top-k percentages) this close to the best order's
#: are a tie, won by the smaller model.
TOLERANCE = 0.15
#: Points of held-out gain the adaptive stop may give up to measure fewer lists (each
#: list costs an opt and an llc per unit, which is most of a build's time).
STOP_LOSS = 0.25


def fit(
    data: TrainingData,
    compiler: Compiler,
    *,
    candidates: int = CANDIDATES,
    boosted: bool = True,
) -> Ranker:
    """Trains a ranker on ``data``, choosing its learner on held-out packages.

    Every package is held out in turn; candidates are chosen from ``data``'s lists and
    every learner of :func:`~llm_compiler.predictor.learners.learners` trained on the
    others (:func:`~llm_compiler.predictor.learners.held_out`). Of the orders whose first
    list alone is not worse than -Oz on the held-out units (all, if none is), the one whose
    top 1, 3 and 10 lists gain most there, summed, wins (ties: the earlier; an unlearned
    order or one with the safe list first may win, and the manifest says which). With
    LightGBM, the boosted regression is the gauge of the adaptive default, and its stop is
    the threshold whose held-out first list is not worse than -Oz on average and whose
    lists gain most (none: every unit measures its first lists, up to the most asked).

    Raises:
        InvalidInput: Fewer than two packages or no candidate.
    """
    packages = sorted({unit.package for unit in data.units})
    if len(packages) < 2 or not data.pipelines:
        raise InvalidInput(
            f"The training data give {len(packages)} package(s) and {len(data.pipelines)} candidate list(s); "
            "a predictor needs units of at least two packages (it is checked on each package held out) "
            "and lists that beat -Oz. Measure or tune more programs."
        )
    raw = log_scaled([u.features for u in data.units])
    oz = np.asarray([u.oz_size for u in data.units], dtype=np.float64)
    gains = gain_matrix([u.oz_size for u in data.units], data.sizes)
    groups = np.asarray([packages.index(u.package) for u in data.units])
    tried = learners(boosted)
    figures, curves = held_out(raw, gains, groups, oz, candidates, tried, STOP_GRID)
    honest = [name for name in figures if figures[name]["first"] >= 0.0] or list(figures)
    score = {name: sum(figures[name][f"top_{k}"] for k in TOP_K) for name in honest}
    # Within the noise of the held-out figures, the smaller model (earlier learner) wins.
    best_name = next(name for name in honest if score[name] >= max(score.values()) - TOLERANCE)
    best = next(learner for learner in tried if best_name in (learner.name, learner.name + SAFE))
    columns = choose_candidates(gains, groups, candidates)
    chosen_gains = gains[:, columns]
    model = best.train(raw, chosen_gains)
    gauge_learner = next((learner for learner in tried if learner.name == GAUGE), None)
    gauge = None
    if gauge_learner is not None:
        gauge = model if best is gauge_learner else gauge_learner.train(raw, chosen_gains)
    if best_name.endswith(SAFE):
        model = SafeFirst(model, safe_list(chosen_gains, groups))
    stop = _stop(curves.get(best_name)) if gauge is not None else None
    wins = np.bincount(
        np.maximum(chosen_gains, 0.0).argmax(axis=1)[chosen_gains.max(axis=1) > 0], minlength=len(columns)
    )
    frequency = (
        tuple(data.frequency[k] for k in columns) if any(data.frequency) else tuple(int(n) for n in wins)
    )
    manifest = {
        "llvm_version": compiler.llvm_version,
        "llvm_major": int(compiler.llvm_version.split(".")[0]),
        "pass_set": pass_set_hash(compiler),
        "feature_version": FEATURE_VERSION,
        "features": len(FEATURE_NAMES),
        "training": {**data.provenance, "candidates": len(columns), "pool": len(data.pipelines)},
        "held_out": {
            "how": "each package held out in turn: candidates chosen and every learner trained on the "
            "others; geomean % below -Oz of the best of the first k lists (-Oz as backup), measured before "
            "validation; first: the first list alone, no backup; total_10: % of all bytes at k = 10",
            "chosen": best_name,
            "learners": figures,
            "gauge": GAUGE if gauge is not None else None,
            "stop": stop,
            "adaptive": curves.get(best_name, {}),
        },
    }
    return Ranker(tuple(data.pipelines[k] for k in columns), frequency, model, gauge, stop, manifest)


def _stop(curve: dict[str, dict[str, float]] | None) -> float | None:
    """Of the thresholds whose held-out first list is not worse than -Oz on average, the
    largest whose lists gain within :data:`STOP_LOSS` points of the best threshold's (fewest
    compiles for about the same gain); None when there is none."""
    if not curve:
        return None
    honest = {float(t): point["gain"] for t, point in curve.items() if point["first"] >= 0.0}
    if not honest:
        return None
    best = max(honest.values())
    return max(t for t, gain in honest.items() if gain >= best - STOP_LOSS)
