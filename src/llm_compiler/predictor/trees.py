"""Gradient-boosted trees as plain data: trained by LightGBM, evaluated with numpy alone.

The boosted ranker (:mod:`llm_compiler.predictor.learners`) predicts, for a unit and a
candidate list, the list's gain over -Oz (or a ranking score) from the unit's features and
the candidate's index. LightGBM trains it (the ``[predictor]`` extra, only where a ranker is
trained); the trees are then kept as arrays in the ranker's JSON file, so using a ranker
needs numpy only and loading it runs no code (no pickle).

A tree's node is numerical (go left when ``x[feature] <= threshold``) or categorical (go
left when the candidate's index is among the node's categories); every input is finite,
so LightGBM's handling of missing values never applies. :meth:`TreeEnsemble.predict`
walks all trees at once, one level per step, over a matrix of rows (one per candidate):
a few milliseconds for a few hundred trees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from llm_compiler.errors import InvalidInput

#: The settings every boosted ranker is trained with (besides its objective).
TRAINING_SETTINGS: dict[str, Any] = {
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "lambda_l2": 1.0,
    "max_cat_to_onehot": 4,
    "cat_smooth": 1.0,
    "min_data_per_group": 20,
    "deterministic": True,
    "force_col_wise": True,
    "num_threads": 1,
    "seed": 0,
    "verbosity": -1,
}


@dataclass(frozen=True)
class TreeEnsemble:
    """Trees as flat arrays (every tree's nodes one after the other).

    Attributes:
        feature: Per node, the input column it tests (-1: a leaf).
        threshold: Per numerical node, the split value.
        categories: Per categorical node, the candidate indices that go left (else empty).
        left, right: Per node, the index of its children (a leaf: itself).
        value: Per leaf, what it adds to the prediction.
        roots: Each tree's first node.
        depth: The longest path from a root to a leaf.
    """

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    categories: tuple[tuple[int, ...], ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]
    roots: tuple[int, ...]
    depth: int

    def predict(self, rows: Any) -> Any:
        """The ensemble's output for each row of ``rows`` (shape: rows x inputs)."""
        feature, threshold, left, right, value, roots, masks, mask_row = self._arrays
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        count, width = rows.shape
        flat = rows.ravel()
        node = np.tile(roots, count)
        base = np.repeat(np.arange(count, dtype=np.int64) * width, len(roots))
        categorical = bool(masks.shape[0] > 1)
        # Only the paths still at an inner node are walked on: most end well before `depth`.
        active = np.flatnonzero(feature[node] >= 0)
        while active.size:
            at = node[active]
            tested = feature[at]
            x = flat[base[active] + tested]
            go_left = x <= threshold[at]
            if categorical:
                row = mask_row[at]
                chosen = row > 0
                go_left[chosen] = masks[
                    row[chosen], np.clip(x[chosen], 0, masks.shape[1] - 1).astype(np.int64)
                ]
            at = np.where(go_left, left[at], right[at])
            node[active] = at
            active = active[feature[at] >= 0]
        return value[node].reshape(count, len(roots)).sum(axis=1)

    @property
    def _arrays(self) -> tuple[Any, ...]:
        cached = self.__dict__.get("_cached")
        if cached is None:
            # One column past the largest category listed: any index beyond goes right.
            width = 2 + max((max(c) for c in self.categories if c), default=0)
            categorical = [i for i, c in enumerate(self.categories) if c]
            masks = np.zeros((len(categorical) + 1, width), dtype=bool)
            mask_row = np.zeros(len(self.feature), dtype=np.int64)
            for row, node in enumerate(categorical, 1):
                masks[row, list(self.categories[node])] = True
                mask_row[node] = row
            cached = (
                np.asarray(self.feature, dtype=np.int64),
                np.asarray(self.threshold, dtype=np.float64),
                np.asarray(self.left, dtype=np.int64),
                np.asarray(self.right, dtype=np.int64),
                np.asarray(self.value, dtype=np.float64),
                np.asarray(self.roots, dtype=np.int64),
                masks,
                mask_row,
            )
            object.__setattr__(self, "_cached", cached)
        return cached

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": list(self.feature),
            "threshold": [float(repr_float(x)) for x in self.threshold],
            "categories": {str(i): list(c) for i, c in enumerate(self.categories) if c},
            "left": list(self.left),
            "right": list(self.right),
            "value": [float(repr_float(x)) for x in self.value],
            "roots": list(self.roots),
            "depth": self.depth,
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> TreeEnsemble:
        """Reads :meth:`to_json`'s record.

        Raises:
            InvalidInput: A malformed record.
        """
        try:
            count = len(record["feature"])
            categories: list[tuple[int, ...]] = [()] * count
            for key, members in record["categories"].items():
                categories[int(key)] = tuple(int(m) for m in members)
            ensemble = cls(
                tuple(int(x) for x in record["feature"]),
                tuple(float(x) for x in record["threshold"]),
                tuple(categories),
                tuple(int(x) for x in record["left"]),
                tuple(int(x) for x in record["right"]),
                tuple(float(x) for x in record["value"]),
                tuple(int(x) for x in record["roots"]),
                int(record["depth"]),
            )
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise InvalidInput(f"not a tree ensemble ({error!r})") from error
        sizes = {len(ensemble.threshold), len(ensemble.left), len(ensemble.right), len(ensemble.value)}
        if sizes != {count} or any(not 0 <= r < count for r in ensemble.roots):
            raise InvalidInput("not a tree ensemble (arrays of different lengths or roots out of range)")
        return ensemble


def repr_float(value: float) -> str:
    """The shortest text that reads back as the same double."""
    return repr(float(value))


def train_lightgbm(
    rows: Any,
    labels: Any,
    *,
    objective: str,
    rounds: int,
    categorical: int,
    groups: Any = None,
) -> TreeEnsemble:
    """Trains LightGBM on ``rows`` and returns its trees as plain data.

    Args:
        rows: Inputs (rows x columns); column ``categorical`` is the candidate index.
        labels: Targets (a regression) or relevance grades (``lambdarank``).
        objective: ``regression`` or ``lambdarank``.
        rounds: Boosting rounds (trees).
        categorical: The column of the candidate index.
        groups: For ``lambdarank``, the number of consecutive rows of each unit.

    Raises:
        InvalidInput: LightGBM is not installed (the ``[predictor]`` extra).
    """
    try:
        import lightgbm
    except ImportError as error:
        raise InvalidInput(
            "Training a boosted ranker needs LightGBM: pip install 'llm-compiler[predictor]' "
            "(using one needs numpy only)."
        ) from error
    params = dict(TRAINING_SETTINGS, objective=objective)
    if objective == "lambdarank":
        params.update(lambdarank_truncation_level=10, label_gain=[float(2**g - 1) for g in range(32)])
    dataset = lightgbm.Dataset(
        np.asarray(rows, dtype=np.float64),
        label=np.asarray(labels, dtype=np.float64),
        group=groups,
        categorical_feature=[categorical],
        free_raw_data=True,
        params={"verbosity": -1},
    )
    booster = lightgbm.train(params, dataset, num_boost_round=rounds)
    return from_lightgbm(booster.dump_model())


def from_lightgbm(dump: dict[str, Any]) -> TreeEnsemble:
    """A LightGBM model dump (``Booster.dump_model()``) as a :class:`TreeEnsemble`."""
    feature: list[int] = []
    threshold: list[float] = []
    categories: list[tuple[int, ...]] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: dict[str, Any], level: int) -> int:
        nonlocal depth
        index = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        categories.append(())
        left.append(index)
        right.append(index)
        value.append(0.0)
        if "split_index" not in node:
            value[index] = float(node["leaf_value"])
            depth = max(depth, level)
            return index
        feature[index] = int(node["split_feature"])
        if node["decision_type"] == "==":
            categories[index] = tuple(sorted(int(c) for c in str(node["threshold"]).split("||")))
        elif node["decision_type"] == "<=":
            threshold[index] = float(node["threshold"])
        else:
            raise InvalidInput(f"a LightGBM split of type {node['decision_type']!r} is not supported")
        left[index] = add(node["left_child"], level + 1)
        right[index] = add(node["right_child"], level + 1)
        return index

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"], 0))
    return TreeEnsemble(
        tuple(feature),
        tuple(threshold),
        tuple(categories),
        tuple(left),
        tuple(right),
        tuple(value),
        tuple(roots),
        depth,
    )


def dumps(ensemble: TreeEnsemble) -> str:
    """The ensemble's JSON text (the same trees always give the same text)."""
    return json.dumps(ensemble.to_json(), sort_keys=True, separators=(",", ":"))
