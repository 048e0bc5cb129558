"""Corpus statistics: what is in it, how big, and how much of it fits a prompt.

The figures mirror what the paper reports of MiBench (system notes, sections 8-9):
the share of translation units whose prompt exceeds the token limit before
splitting, and how many per-function prompts still do not fit after splitting.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from llm_compiler.corpus.store import SPLITS, CorpusStore, Unit


def _distribution(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def quantile(q: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])

    return {
        "count": len(ordered),
        "min": float(ordered[0]),
        "median": float(statistics.median(ordered)),
        "p90": quantile(0.9),
        "max": float(ordered[-1]),
        "mean": round(statistics.fmean(ordered), 1),
    }


def corpus_stats(store: CorpusStore, token_limit: int) -> dict[str, Any]:
    """Counts, distributions and prompt-fit figures of a corpus, as a JSON-able dict.

    Args:
        store: The corpus.
        token_limit: The prompt budget the fit figures are computed against.
    """
    units = list(store.units())
    translation_units = [unit for unit in units if unit.kind == "unit"]
    functions = [unit for unit in units if unit.kind == "function"]
    per_package: dict[str, dict[str, Any]] = defaultdict(lambda: {"units": 0, "functions": 0, "split": ""})
    per_split: Counter[str] = Counter()
    packages_per_split: dict[str, set[str]] = defaultdict(set)
    for unit in units:
        entry = per_package[unit.provenance.package]
        entry["units" if unit.kind == "unit" else "functions"] += 1
        entry["split"] = unit.split
        per_split[unit.split] += 1
        packages_per_split[unit.split].add(unit.provenance.package)
    over = [unit for unit in translation_units if unit.tokens > token_limit]
    split_parents = {unit.provenance.parent for unit in functions}
    fitting_functions = [unit for unit in functions if unit.tokens <= token_limit]
    over_split = [unit for unit in over if unit.id in split_parents]
    failures = store.failures()
    return {
        "corpus": str(store.root),
        "units": len(translation_units),
        "function_units": len(functions),
        "packages": len(per_package),
        "per_split": {
            split: {"units": per_split[split], "packages": len(packages_per_split[split])} for split in SPLITS
        },
        "per_package": dict(sorted(per_package.items())),
        "languages": dict(Counter(unit.language for unit in translation_units)),
        "oz_size": _distribution([unit.oz_size for unit in translation_units]),
        "o0_size": _distribution([unit.o0_size for unit in translation_units]),
        "instructions": _distribution([unit.instructions for unit in translation_units]),
        "tokens": _distribution([unit.tokens for unit in translation_units]),
        "token_counter": translation_units[0].token_counter if translation_units else "",
        "token_limit": token_limit,
        "over_limit_before_splitting": len(over),
        "over_limit_share": round(len(over) / len(translation_units), 4) if translation_units else 0.0,
        "split_units": len(over_split),
        "function_prompts_fitting": len(fitting_functions),
        "function_prompts_over_limit": len(functions) - len(fitting_functions),
        "prompts_fitting": len(translation_units) - len(over) + len(fitting_functions),
        "failures": dict(Counter(failure.stage for failure in failures)),
        "leaks": split_leaks(units),
    }


def split_leaks(units: Sequence[Unit]) -> list[str]:
    """Content hashes or packages found in more than one split (empty for a sound corpus)."""
    splits_of_id: dict[str, set[str]] = defaultdict(set)
    splits_of_package: dict[str, set[str]] = defaultdict(set)
    for unit in units:
        splits_of_id[unit.id].add(unit.split)
        splits_of_package[unit.provenance.package].add(unit.split)
    leaks = [f"unit {key}" for key, splits in splits_of_id.items() if len(splits) > 1]
    leaks += [f"package {key}" for key, splits in splits_of_package.items() if len(splits) > 1]
    return leaks
