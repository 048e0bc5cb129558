"""The learned ranker: which of the candidate lists to try first on a unit never seen.

A ranker is a fixed set of candidate lists and a **model** that orders them for a unit
from its IR features (:mod:`llm_compiler.predictor.features`, log-scaled). The models
are those of :mod:`llm_compiler.predictor.learners`: gradient-boosted trees predicting
each candidate's gain over -Oz (their predictions also tell ``optimize`` when the next
lists are not worth measuring), the same trees trained to rank, or the nearest training
units' best sets; :func:`~llm_compiler.predictor.fit.fit` (training, apart from this
module) tries them all with each training package held out in turn and keeps the one
that does best on packages it never saw (the first list alone must not be worse than
-Oz on average there). The manifest keeps every learner's held-out figures
beside the unlearned orders' (by frequency, by coverage).

The file is plain JSON (no pickle: loading runs no code; the trees are arrays evaluated
with numpy), and the same training data give the same bytes. It records what it was
trained for: the LLVM major version, a hash of that LLVM's searchable pass set, the
feature version, the training packages. :func:`load` refuses a file made for another
LLVM or pass set, naming the retraining command, and still reads the first format's
nearest-neighbour files.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text
from llm_compiler.predictor.features import FEATURE_VERSION, ir_features
from llm_compiler.predictor.learners import Boosted, FixedOrder, Model, NearestSets, SafeFirst, log_scaled
from llm_compiler.predictor.trees import TreeEnsemble

#: The file format; a change that old readers cannot read bumps it (1: nearest neighbours only).
FORMAT = 2
#: The most lists the adaptive default measures per unit.
MAX_LISTS = 10
RETRAIN = (
    "llm-compiler predictor train --table TABLE --out DIR (TABLE: `llm-compiler predictor table PROGRAMS "
    "--out TABLE`), or --tuning RUN... (RUN: `llm-compiler tune PROGRAMS --out RUN`)"
)


@dataclass(frozen=True)
class Ranker:
    """A trained ranker (see the module docstring).

    Attributes:
        pipelines: The candidate lists, exact ``opt -passes=`` texts.
        frequency: Training units that kept or were best with each candidate (the
            unlearned order of ``common:N``).
        model: Orders the candidates for a unit's log-scaled features.
        gauge: Predicts each candidate's gain on a unit (boosted trees), for the adaptive
            default (None: a fixed number of lists).
        stop: The adaptive default measures the lists the gauge predicts to gain at least
            this, in the model's order; a unit with none keeps -Oz at no compile.
        manifest: What it was trained on and for, and its held-out figures.
    """

    pipelines: tuple[str, ...]
    frequency: tuple[int, ...]
    model: Model
    gauge: Model | None = None
    stop: float | None = None
    manifest: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def order(self, features: Sequence[float]) -> list[int]:
        """Candidate indices for a unit with these IR features, best first."""
        return self.model.order(log_scaled(features))

    def rank(self, ir: str) -> list[str]:
        """The candidates for a unit's unoptimized IR, best first."""
        return [self.pipelines[k] for k in self.order(ir_features(ir))]

    def adaptive(self, ir: str, most: int) -> list[str]:
        """The first ``most`` of :meth:`rank`'s lists that the gauge predicts to gain at
        least :attr:`stop` (possibly none; the safe list of a safe-first order always);
        all ``most`` without a gauge."""
        features = log_scaled(ir_features(ir))
        order = self.model.order(features)[:most]
        predicted = self.gauge.predicted_gains(features) if self.gauge is not None else None
        if predicted is None or self.stop is None:
            return [self.pipelines[k] for k in order]
        kept = order[:1] if isinstance(self.model, SafeFirst) else []  # the safe list is always tried
        kept += [k for k in order[len(kept) :] if predicted[k] >= self.stop]
        return [self.pipelines[k] for k in kept]

    def by_frequency(self) -> list[str]:
        """The candidates most often kept in training first (no learning)."""
        order = sorted(range(len(self.pipelines)), key=lambda k: (-self.frequency[k], k))
        return [self.pipelines[k] for k in order]

    def subset(self, kept: Sequence[int], manifest: dict[str, Any]) -> Ranker:
        """The ranker restricted to candidates ``kept`` (their order kept), with ``manifest``."""
        return Ranker(
            tuple(self.pipelines[k] for k in kept),
            tuple(self.frequency[k] for k in kept),
            self.model.subset(kept),
            self.gauge.subset(kept) if self.gauge is not None else None,
            self.stop,
            manifest,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "manifest": self.manifest,
            "model": self.model.to_json(),
            "gauge": self.gauge.to_json() if self.gauge is not None else None,
            "stop": self.stop,
            "pipelines": list(self.pipelines),
            "frequency": list(self.frequency),
        }

    def save(self, path: Path) -> Path:
        """Writes the ranker as JSON (the same ranker always gives the same bytes)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return atomic_write_text(path, text + "\n")


def pass_set_hash(compiler: Compiler) -> str:
    """A short hash of the installed LLVM's searchable pass set."""
    return hashlib.sha256("\n".join(compiler.pass_set.members).encode()).hexdigest()[:16]


def _model(record: dict[str, Any], key: str = "model") -> Model:
    """A model of a ranker file (format 1 kept its arrays beside the model's settings)."""
    model = record[key]
    kind = model.get("kind")
    if record["format"] == 1:
        model = {**record, **model}
    if kind == "nearest-neighbour-sets":
        return NearestSets(
            tuple(model["center"]),
            tuple(model["scale"]),
            tuple(tuple(row) for row in model["points"]),
            tuple(tuple(row) for row in model["gains"]),
            int(model["neighbours"]),
            float(model["prior"]),
            str(model["target"]),
        )
    if kind == "boosted-trees":
        return Boosted(
            TreeEnsemble.from_json(model["trees"]),
            tuple(int(k) for k in model["candidates"]),
            str(model["objective"]),
            int(model["rounds"]),
        )
    if kind == "fixed":
        return FixedOrder(tuple(int(k) for k in model["order"]))
    if kind == "safe-first":
        return SafeFirst(_model({"format": FORMAT, "inner": model["inner"]}, "inner"), int(model["safe"]))
    raise ValueError(f"unknown model kind {kind!r}")


def load(path: Path, compiler: Compiler | None = None) -> Ranker:
    """Reads a ranker; with ``compiler``, checks it was trained for that LLVM and pass set.

    A file read before, unchanged (same size and modification time), is not parsed again.

    Raises:
        InvalidInput: Not a ranker file, another format, or trained for another LLVM
            major version, pass set or feature version.
    """
    try:
        info = path.stat()
    except OSError as error:
        raise InvalidInput(f"{path}: not a predictor file ({error}). Make one with: {RETRAIN}") from error
    ranker = _read(str(path), info.st_size, info.st_mtime_ns)
    manifest = ranker.manifest
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
    return ranker


@functools.lru_cache(maxsize=8)
def _read(name: str, size: int, mtime_ns: int) -> Ranker:
    """The ranker in file ``name`` as it was at ``size`` and ``mtime_ns`` (the cache's key)."""
    path = Path(name)
    try:
        record = json.loads(path.read_text())
        manifest = record["manifest"]
        fmt = record.get("format")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInput(f"{path}: not a predictor file ({error}). Make one with: {RETRAIN}") from error
    if fmt not in (1, FORMAT):
        raise InvalidInput(
            f"{path}: a predictor file of format {fmt}, this llm-compiler reads 1 and {FORMAT}: {RETRAIN}"
        )
    if manifest.get("feature_version") != FEATURE_VERSION:
        raise InvalidInput(
            f"{path}: trained on features of version {manifest.get('feature_version')}, this llm-compiler "
            f"computes version {FEATURE_VERSION}; retrain: {RETRAIN}"
        )
    try:
        model = _model(record)
        gauge = _model(record, "gauge") if record.get("gauge") else None
        pipelines = tuple(str(p) for p in record["pipelines"])
        frequency = tuple(int(n) for n in record["frequency"])
        stop = record.get("stop")
    except (KeyError, TypeError, ValueError, InvalidInput) as error:
        raise InvalidInput(f"{path}: a damaged predictor file ({error}); {RETRAIN}") from error
    return Ranker(pipelines, frequency, model, gauge, None if stop is None else float(stop), manifest)
