"""The compiler that runs a unit's lists when the driver was given none that fits.

``opt`` and ``llc`` run as processes (one unit per process: loading LLVM as a library
would not pay off), or, under the compile server, as children of its zygote: LLVM
loaded once, each compile from the same state (:mod:`llm_compiler.toolchain.zygote`).
A unit with LLVM options (``-mllvm``) gets processes that take them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from llm_compiler.errors import ToolchainError
from llm_compiler.toolchain.llvm import Toolchain

if TYPE_CHECKING:  # the optimizer is loaded on a cache miss only (llm_compiler.driver.cache)
    from llm_compiler.core.compiler import Compiler

logger = logging.getLogger(__name__)


def unit_compiler(toolchain: Toolchain, timeout: float, llvm_options: Sequence[str] = ()) -> Compiler:
    """A new compiler for one unit (module docstring), which keeps the IR of the lists it
    runs: the -Oz and chosen lists are measured while choosing, lowering reuses their IR.

    Args:
        toolchain: The LLVM to run.
        timeout: Seconds ``opt`` may run on the unit.
        llvm_options: The unit's ``-mllvm`` options, for ``opt`` and ``llc``.
    """
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.toolchain.zygote import ENVIRONMENT as ZYGOTE_ENVIRONMENT

    if not llvm_options and os.environ.get(ZYGOTE_ENVIRONMENT, "off") != "off":
        try:
            compiler = Compiler(toolchain, timeout=timeout, engine="zygote", workers=1, keep_ir=True)
        except ToolchainError as error:
            logger.debug("no zygote: %s", error)
        else:
            logger.debug("engine: %s", compiler.engine_note)
            return compiler
    return Compiler(
        toolchain,
        timeout=timeout,
        engine="subprocess",
        workers=1,
        keep_ir=True,
        llvm_options=llvm_options,
    )
