"""The rankers shipped inside the package, one per LLVM major, and the one an LLVM gets.

A ranker learns from sizes measured with one LLVM, so the package ships one for each
major it was trained with (``predictor/data/ranker-llvm<major>.json``).
:func:`ranker_file` gives the file for the LLVM in use:

* the shipped ranker of that major, as it is, when it was trained on the same
  searchable pass set;
* otherwise the ranker of the nearest shipped major (the newer one on a tie), its
  candidate lists adapted to the installed ``opt``: each element of a list is kept
  when the installed searchable set has it, replaced by the installed set's spelling of
  the same pass when only its parameters differ, and dropped otherwise; every adapted
  list is then probed with ``opt`` on the bundled sample program, and a list that
  fails, is left empty or repeats an earlier one is dropped with its column of gains.
  The adapted ranker is written to the cache (one file per source ranker and installed
  LLVM) and one line says so. The gains it ranks by are still the source LLVM's: the
  order is a good guess, and every list is measured and validated before it is kept,
  as with any ranker.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import re
import tempfile
from importlib import resources
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.files import cache_dir
from llm_compiler.passes.pipeline import PassList, PassNode, parse_pipeline
from llm_compiler.passes.searchable import compile_sample, probe_pipeline
from llm_compiler.predictor.ranker import Ranker, load, pass_set_hash

logger = logging.getLogger(__name__)

_NAME = re.compile(r"ranker-llvm(\d+)\.json")


def data_dir() -> Path:
    """The folder of the shipped rankers."""
    return Path(str(resources.files("llm_compiler.predictor") / "data"))


def preload_shipped() -> None:
    """Reads the rankers shipped with the package (the compile server does, once)."""
    for path in sorted(data_dir().glob("ranker-llvm*.json")):
        load(path)  # kept parsed by its size and modification time


def shipped_majors() -> tuple[int, ...]:
    """The LLVM majors a ranker is shipped for, oldest first."""
    found = (_NAME.fullmatch(path.name) for path in data_dir().iterdir())
    return tuple(sorted(int(match.group(1)) for match in found if match))


def shipped_ranker(major: int) -> Path:
    """The shipped ranker file for LLVM ``major`` (it may not exist)."""
    return data_dir() / f"ranker-llvm{major}.json"


def nearest_major(major: int, majors: tuple[int, ...]) -> int:
    """The shipped major closest to ``major``; the newer one on a tie."""
    if not majors:
        raise InvalidInput("No ranker is shipped with this llm-compiler; reinstall the package.")
    return min(majors, key=lambda m: (abs(m - major), -m))


def ranker_file(compiler: Compiler) -> Path:
    """The ranker file for ``compiler``'s LLVM: shipped, or adapted and cached (module docstring).

    Raises:
        InvalidInput: No ranker is shipped, or no candidate list survives adaptation.
    """
    return _ranker_file(compiler)


@functools.lru_cache(maxsize=8)
def _ranker_file(compiler: Compiler) -> Path:
    major = int(compiler.llvm_version.split(".")[0])
    own = shipped_ranker(major)
    if own.is_file():
        try:
            load(own, compiler)
            return own
        except InvalidInput as error:
            logger.warning("%s; adapting its lists to LLVM %s instead.", error, compiler.llvm_version)
    source_major = nearest_major(major, shipped_majors())
    source = shipped_ranker(source_major)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir("predictor") / (
        f"ranker-llvm{compiler.llvm_version}-{pass_set_hash(compiler)}-from-{source_major}-{digest}.json"
    )
    if target.is_file():
        try:
            ranker = load(target, compiler)
        except InvalidInput:
            pass  # torn or stale: made again below
        else:
            logger.warning(_note(ranker, compiler))
            return target
    ranker = adapt_ranker(load(source), compiler)
    ranker.save(target)
    logger.warning(_note(ranker, compiler))
    return target


def _note(ranker: Ranker, compiler: Compiler) -> str:
    adapted = ranker.manifest["adapted_from"]
    return (
        f"No ranker is shipped for LLVM {compiler.llvm_version}; using the one trained with LLVM "
        f"{adapted['llvm_version']}, its lists adapted to this opt ({len(ranker.pipelines)} of "
        f"{adapted['candidates']} kept, {adapted['elements_replaced']} passes respelled, "
        f"{adapted['elements_dropped']} dropped). Tune with this LLVM and run `llm-compiler predictor "
        "train` for a ranker of its own."
    )


def adapt_ranker(ranker: Ranker, compiler: Compiler) -> Ranker:
    """``ranker`` with its candidates adapted to ``compiler``'s LLVM (module docstring).

    Raises:
        InvalidInput: No candidate list survives.
    """
    members = {member: parse_pipeline(member) for member in compiler.pass_set.members}
    by_leaves: dict[tuple[str, ...], str] = {}
    for member, parsed in members.items():
        by_leaves.setdefault(_leaf_names(parsed[0]), member)
    kept: list[int] = []
    texts: list[str] = []
    replaced = dropped = 0
    toolchain = compiler.toolchain
    with tempfile.TemporaryDirectory(prefix="llm-compiler-adapt-") as scratch:
        sample = compile_sample(toolchain, Path(scratch))
        for index, text in enumerate(ranker.pipelines):
            elements: list[PassNode] = []
            for node in parse_pipeline(text):
                element = str(PassList((node,)))
                if element in members:
                    elements.append(node)
                elif (spelling := by_leaves.get(_leaf_names(node))) is not None:
                    elements.append(members[spelling][0])
                    replaced += 1
                else:
                    dropped += 1
            adapted = str(PassList(elements))
            if not elements or adapted in texts:
                continue
            failure = probe_pipeline(toolchain, adapted, sample, timeout=60.0)
            if failure is not None:
                logger.info("dropping the adapted list %s: %s", adapted, failure)
                continue
            kept.append(index)
            texts.append(adapted)
    if not kept:
        raise InvalidInput(
            f"None of the shipped ranker's lists runs on LLVM {compiler.llvm_version}. Tune with this "
            "LLVM and train a ranker: llm-compiler predictor train --tuning RUN --out DIR"
        )
    manifest = dict(ranker.manifest)
    manifest.update(
        llvm_version=compiler.llvm_version,
        llvm_major=int(compiler.llvm_version.split(".")[0]),
        pass_set=pass_set_hash(compiler),
        adapted_from={
            "llvm_version": ranker.manifest.get("llvm_version"),
            "pass_set": ranker.manifest.get("pass_set"),
            "candidates": len(ranker.pipelines),
            "kept": kept,
            "elements_replaced": replaced,
            "elements_dropped": dropped,
        },
    )
    return dataclasses.replace(ranker.subset(kept, manifest), pipelines=tuple(texts))


def _leaf_names(node: PassNode) -> tuple[str, ...]:
    """The pass names of an element, nesting included, without parameters."""
    if node.children is None:
        return (node.name,)
    return (node.name, *(name for child in node.children for name in _leaf_names(child)))


def shipped_pool(compiler: Compiler) -> list[tuple[str, str]]:
    """Every shipped ranker's candidates, adapted to ``compiler``'s LLVM where it is another
    (pairs of list and where it came from), for a training table's pool."""
    pool: list[tuple[str, str]] = []
    for major in shipped_majors():
        ranker = load(shipped_ranker(major))
        if ranker.manifest.get("llvm_major") != int(compiler.llvm_version.split(".")[0]):
            ranker = adapt_ranker(ranker, compiler)
        pool += [(pipeline, f"shipped ranker of LLVM {major}") for pipeline in ranker.pipelines]
    return pool
