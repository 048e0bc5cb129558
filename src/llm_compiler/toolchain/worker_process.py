"""A compile worker: the process behind :class:`~llm_compiler.toolchain.worker_pool.WorkerPool`.

Run as ``python -m llm_compiler.toolchain.worker_process LLVM_BIN VERSION [CACHE_BOUND]``. It
answers requests read from stdin with :class:`~llm_compiler.toolchain.inprocess.InProcessLLVM`
until stdin closes. Requests and answers:

* ``("add", id, ir)`` -> ``("ok",)`` or ``("llvm-error", message)``
* ``("evaluate", id, pipeline, want_ir, want_asm, memo, want_obj)`` -> ``("ok", Evaluation)``,
  ``("missing",)`` when the program is not held, or ``("llvm-error", message)``
* ``("stepwise", id, elements, use_cache, want_ir, want_asm, lower)`` -> the same (without
  ``lower`` counted and hashed only, no code generated)
* ``("count", id, pipeline)`` -> ``("ok", (instructions, ir_hash, seconds))``, no code generated
* ``("lower", ir, want_asm)`` -> ``("ok", Evaluation)`` or ``("llvm-error", message)``

A bug in the worker's own Python code answers ``("internal-error", traceback)``.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any

from llm_compiler.toolchain.inprocess import DEFAULT_PREFIX_CACHE_INSTRUCTIONS, InProcessLLVM
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.llvm_c import LLVMError
from llm_compiler.toolchain.worker_pool import receive_message, send_message


def _handle(engine: InProcessLLVM, request: tuple[Any, ...]) -> tuple[Any, ...]:
    kind = request[0]
    if kind == "add":
        engine.add_program(request[1], request[2])
        return ("ok",)
    if kind == "lower":
        return ("ok", engine.lower_text(request[1], want_asm=request[2]))
    if not engine.has_program(request[1]):
        return ("missing",)
    if kind == "evaluate":
        _, program_id, pipeline, want_ir, want_asm, memo, want_obj = request
        evaluation = engine.evaluate(
            program_id, pipeline, want_ir=want_ir, want_asm=want_asm, memo=memo, want_obj=want_obj
        )
        return ("ok", evaluation)
    if kind == "count":
        return ("ok", engine.count(request[1], request[2]))
    if kind == "stepwise":
        _, program_id, elements, use_cache, want_ir, want_asm, lower = request
        evaluation = engine.evaluate_stepwise(
            program_id, elements, use_cache=use_cache, want_ir=want_ir, want_asm=want_asm, lower=lower
        )
        return ("ok", evaluation)
    return ("llvm-error", f"unknown request {kind!r}")


def main(argv: list[str]) -> int:
    toolchain = Toolchain(Path(argv[0]), argv[1])
    bound = int(argv[2]) if len(argv) > 2 else DEFAULT_PREFIX_CACHE_INSTRUCTIONS
    # Keep the protocol on a private descriptor; anything printed to fd 1 goes to stderr.
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    requests = sys.stdin.fileno()
    engine = InProcessLLVM(toolchain, prefix_cache_instructions=bound)
    # On a crash, LLVM's handlers print the stack and the pass that ran: the evidence.
    engine.lib.LLVMEnablePrettyStackTrace()
    while True:
        request = receive_message(requests)
        if request is None:
            return 0
        try:
            response = _handle(engine, request)
        except LLVMError as error:
            response = ("llvm-error", str(error))
        except Exception:
            response = ("internal-error", traceback.format_exc())
        send_message(protocol_out, response)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
