"""What the compile server loads once for ``llm-compiler cc``: the server's preload hook.

:mod:`llm_compiler.driver.server` serves ``llm_compiler.cli.cc:main`` with
:func:`preload`, which it calls once before it listens: every command it forks then
starts with the modules a miss imports, the shipped rankers read, and the LLVM of the
server's environment already asked for its pass registry. The server imports the
entry's own module itself.
"""

from __future__ import annotations

import importlib
import os

#: What a miss imports besides the entry's module; the server imports it once.
PRELOAD = (
    "llm_compiler.driver.cc",
    "llm_compiler.driver.predicted",
    "llm_compiler.driver.whole_program",
    "llm_compiler.core.compiler",
    "llm_compiler.toolchain.elf",
    "llm_compiler.selection",
    "llm_compiler.predictor.proposer",
    "llm_compiler.predictor.ranker",
    "llm_compiler.predictor.shipped",
    "numpy",
    "importlib.resources",
    "zipfile",
    "platform",
)


def preload() -> None:
    """Imports :data:`PRELOAD`, reads the shipped rankers and the toolchain's pass data."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one thread per command
    for name in PRELOAD:
        importlib.import_module(name)
    from llm_compiler.predictor.shipped import preload_shipped

    preload_shipped()
    _preload_toolchain()


def _preload_toolchain() -> None:
    """Reads once what every command on the LLVM this environment names reads again: its
    pass registry (``opt --print-passes``), its searchable pass set, and the built-in
    validation suite. A command on another LLVM reads its own; the toolchain itself is
    looked for again by each command."""
    from llm_compiler.selection import preload as preload_selection
    from llm_compiler.toolchain.llvm import find_toolchain, forget_found_toolchains

    try:
        preload_selection(find_toolchain())
    except Exception:  # no usable LLVM here: each command reports it as without a server
        pass
    finally:
        forget_found_toolchains()
