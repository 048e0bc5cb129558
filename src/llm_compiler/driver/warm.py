"""What the compile server loads once for ``llm-compiler cc``: the server's preload hook.

:mod:`llm_compiler.driver.server` serves ``llm_compiler.cli.cc:main`` with
:func:`preload`, which it calls once before it listens: every command it forks then
starts with the modules a miss imports, the shipped rankers read, and the LLVM of the
server's environment already asked for its pass registry. The server imports the
entry's own module itself.

It also starts a zygote for that LLVM (:mod:`llm_compiler.toolchain.zygote`), which
lives as long as the server, and returns its socket as
``LLM_COMPILER_ZYGOTE``: the server gives that variable to each command it forks, and
the command's compiles of that LLVM go to the zygote's children instead of ``opt`` and
``llc`` processes. A command whose environment sets ``LLM_COMPILER_ZYGOTE=off`` runs
them as processes.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import sys
from typing import Any

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


#: The server's zygote, kept for its life.
_zygote: Any = None


def preload() -> dict[str, str]:
    """Imports :data:`PRELOAD`, reads the shipped rankers and the toolchain's pass data,
    starts the toolchain's zygote; returns the variables each command gets (none when
    no zygote could start)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one thread per command
    for name in PRELOAD:
        importlib.import_module(name)
    from llm_compiler.predictor.shipped import preload_shipped

    preload_shipped()
    return _preload_toolchain()


def _preload_toolchain() -> dict[str, str]:
    """Reads once what every command on the LLVM this environment names reads again: its
    pass registry (``opt --print-passes``), its searchable pass set, and the built-in
    validation suite. A command on another LLVM reads its own; the toolchain itself is
    looked for again by each command."""
    from llm_compiler.selection import preload as preload_selection
    from llm_compiler.toolchain.llvm import find_toolchain, forget_found_toolchains

    try:
        toolchain = find_toolchain()
        preload_selection(toolchain)
    except Exception:  # no usable LLVM here: each command reports it as without a server
        return {}
    finally:
        forget_found_toolchains()
    return _start_zygote(toolchain)


def _start_zygote(toolchain: Any) -> dict[str, str]:
    """Starts the zygote of ``toolchain``, stopped when the server exits; the variable
    that names it."""
    global _zygote
    from llm_compiler.errors import ToolchainError
    from llm_compiler.toolchain import zygote

    try:
        _zygote = zygote.start(toolchain)
    except ToolchainError as error:
        logging.getLogger(__name__).warning("no zygote, compiles run opt and llc: %s", error)
        return {}
    atexit.register(_zygote.stop)
    sys.stderr.write(f"zygote of LLVM {toolchain.version} at {_zygote.path}\n")
    return {zygote.ENVIRONMENT: _zygote.path}
