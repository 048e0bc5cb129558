"""LLVM inside the process: parse once, clone per evaluation, run passes, emit to memory.

:class:`InProcessLLVM` does in one process what ``opt -passes=P | llc -filetype=obj``
does in two, with the same answers. Each step mirrors the tools: the module is parsed
from the same text ``opt`` reads (named ``<stdin>`` like ``opt``'s), the pipeline runs
through the new pass manager with a target machine set up like ``opt``'s, a ``verify``
pass closes the pipeline as ``opt``'s does, the result is printed and parsed again as
``llc`` reads it (use-list order and value naming influence code generation, so
skipping the round trip would change sizes), and code generation uses a target machine
set up like ``llc``'s (default code-generation level, verbose assembly). What it
saves is the processes' start-up, file I/O and pipes. The tests check that sizes, IR
text and assembly equal the subprocess path's.

It also keeps **prefix states** for searches whose candidates share prefixes
(insertion search, redundant pass elimination, broadcast): in *stepwise* mode each
top-level element of a pass list runs on its own, the module is cloned after each
element, and the states are cached by (program, pass prefix) under a memory bound, so
a candidate only runs its new suffix. Stepwise results are deterministic and equal
with or without the cache; they may differ from the whole-pipeline result in rare
cases (analyses are not kept between elements), so a search re-measures the lists it
reports with the whole pipeline.

A crash inside LLVM kills this process: run it in a worker
(:mod:`llm_compiler.toolchain.worker_pool`).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.llvm_c import (
    CODEGEN_LEVEL_DEFAULT,
    CODEGEN_LEVEL_NONE,
    LLVMError,
    build_shim,
    load_library,
    load_shim,
)
from llm_compiler.toolchain.runner import run_command

#: Bound on the instructions held in cached prefix states per process.
DEFAULT_PREFIX_CACHE_INSTRUCTIONS = 4_000_000

#: Programs whose parsed modules and prefix states are kept per process (stepwise mode).
DEFAULT_PROGRAMS_KEPT = 16

#: Bytes of program IR text kept per process (least recently used programs go first).
DEFAULT_TEXT_BYTES = 512 * 1024 * 1024

#: Measurements remembered per process by the hash of the optimized IR text.
MEASUREMENTS_KEPT = 100_000


@dataclass(frozen=True)
class Evaluation:
    """What one in-process evaluation produced."""

    text: int
    data: int
    bss: int
    ir_instructions: int
    ir: str | None = None
    assembly: str | None = None
    cached_steps: int = 0
    #: Seconds LLVM spent running passes and generating the object: the work itself.
    llvm_seconds: float = 0.0
    #: Hash of the optimized IR text (see :func:`ir_hash`).
    ir_hash: str = ""
    #: The object file, when asked for.
    obj: bytes | None = None
    #: False when the IR was only counted, not lowered (sizes are then 0).
    lowered: bool = True


def ir_hash(text: str | bytes) -> str:
    """The hash that identifies an optimized IR text (BLAKE2b, 20 bytes, hex)."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=20).hexdigest()


class _ProgramState:
    """A program's context, pristine module and cached prefix states (stepwise mode)."""

    def __init__(self, llvm: InProcessLLVM, ir: bytes) -> None:
        self.llvm = llvm
        self.context = llvm.lib.LLVMContextCreate()
        self.module = llvm.parse(self.context, ir)
        self.instructions = llvm.count_instructions(self.module)
        # Prefix -> module; each counts as ``instructions`` towards the memory bound.
        self.prefixes: OrderedDict[tuple[str, ...], int] = OrderedDict()

    def dispose(self) -> None:
        for module in self.prefixes.values():
            self.llvm.lib.LLVMDisposeModule(module)
        self.prefixes.clear()
        self.llvm.lib.LLVMDisposeModule(self.module)
        self.llvm.lib.LLVMContextDispose(self.context)


class InProcessLLVM:
    """Runs pass lists and code generation in this process through LLVM-C.

    Args:
        toolchain: The LLVM whose shared library to load.
        prefix_cache_instructions: Bound on instructions kept in prefix states.
        programs_kept: How many programs' stepwise states to keep (LRU).
        text_bytes: Bound on the program IR text kept (LRU).
    """

    def __init__(
        self,
        toolchain: Toolchain,
        *,
        prefix_cache_instructions: int = DEFAULT_PREFIX_CACHE_INSTRUCTIONS,
        programs_kept: int = DEFAULT_PROGRAMS_KEPT,
        text_bytes: int = DEFAULT_TEXT_BYTES,
    ) -> None:
        self.toolchain = toolchain
        self.llvm = load_library(toolchain)
        self.lib: Any = self.llvm.lib
        shim_path, self.codegen_note = build_shim(toolchain)
        self.shim = load_shim(shim_path) if shim_path is not None else None
        self.prefix_cache_instructions = prefix_cache_instructions
        self.programs_kept = programs_kept
        self.text_bytes = text_bytes
        self._text_total = 0
        self._texts: OrderedDict[str, bytes] = OrderedDict()
        self._programs: OrderedDict[str, _ProgramState] = OrderedDict()
        self._machines: dict[tuple[str, int], int] = {}
        self._cached_instructions = 0
        self._options = self.lib.LLVMCreatePassBuilderOptions()
        self._llvm_seconds = 0.0
        # Same optimized IR text, same object: (text, data, bss) by the text's hash.
        self._measured: OrderedDict[str, tuple[int, int, int]] = OrderedDict()

    # Modules -------------------------------------------------------------------

    def parse(self, context: int, ir: bytes) -> int:
        """Parses textual or bitcode IR into ``context``; raises LLVMError when invalid."""
        buffer = self.lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, len(ir), b"<stdin>")
        module, message = ctypes.c_void_p(), ctypes.c_void_p()
        if self.lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)):
            raise LLVMError(self.llvm.take_message(message.value) or "invalid IR")
        return int(module.value or 0)

    def has_program(self, program_id: str) -> bool:
        return program_id in self._texts

    def add_program(self, program_id: str, ir: bytes) -> None:
        """Keeps a program's IR (least recently used programs are dropped).

        Raises:
            LLVMError: The IR does not parse.
        """
        if program_id in self._texts:
            self._texts.move_to_end(program_id)
            return
        context = self.lib.LLVMContextCreate()
        try:
            self.lib.LLVMDisposeModule(self.parse(context, ir))
        finally:
            self.lib.LLVMContextDispose(context)
        self._texts[program_id] = ir
        self._text_total += len(ir)
        while self._text_total > self.text_bytes and len(self._texts) > 1:
            dropped, text = self._texts.popitem(last=False)
            self._text_total -= len(text)
            self._drop_state(dropped)

    def _drop_state(self, program_id: str) -> None:
        state = self._programs.pop(program_id, None)
        if state is not None:
            self._cached_instructions -= state.instructions * len(state.prefixes)
            state.dispose()

    def _text(self, program_id: str) -> bytes:
        self._texts.move_to_end(program_id)
        return self._texts[program_id]

    def _state(self, program_id: str) -> _ProgramState:
        if program_id not in self._programs:
            self._programs[program_id] = _ProgramState(self, self._text(program_id))
            while len(self._programs) > self.programs_kept:
                self._drop_state(next(iter(self._programs)))
        self._programs.move_to_end(program_id)
        return self._programs[program_id]

    def count_instructions(self, module: int) -> int:
        """Instructions in all function bodies (LLVM's own walk)."""
        lib = self.lib
        total = 0
        function = lib.LLVMGetFirstFunction(module)
        while function:
            block = lib.LLVMGetFirstBasicBlock(function)
            while block:
                instruction = lib.LLVMGetFirstInstruction(block)
                while instruction:
                    total += 1
                    instruction = lib.LLVMGetNextInstruction(instruction)
                block = lib.LLVMGetNextBasicBlock(block)
            function = lib.LLVMGetNextFunction(function)
        return total

    def print_module(self, module: int) -> str:
        return self.llvm.take_message(self.lib.LLVMPrintModuleToString(module))

    # Passes and code generation ----------------------------------------------------

    def _machine(self, module: int, level: int) -> int:
        triple = (self.lib.LLVMGetTarget(module) or b"").decode() or self.llvm.default_triple()
        key = (triple, level)
        if key not in self._machines:
            self._machines[key] = self.llvm.target_machine(triple, level)
        return self._machines[key]

    def run_passes(self, module: int, pipeline: str) -> None:
        """Runs ``pipeline`` then the verifier on ``module``, as ``opt -passes=`` does."""
        machine = self._machine(module, CODEGEN_LEVEL_NONE)
        started = time.perf_counter()
        error = self.lib.LLVMRunPasses(module, f"{pipeline},verify".encode(), machine, self._options)
        self._llvm_seconds += time.perf_counter() - started
        if error:
            message = self.lib.LLVMGetErrorMessage(error)
            text = ctypes.string_at(message).decode("utf-8", errors="replace")
            self.lib.LLVMDisposeErrorMessage(message)
            raise LLVMError(text)

    def emit(self, module: int, filetype: str) -> bytes:
        """Lowers ``module`` as ``llc -filetype=obj|asm`` does (through the llc helper).
        Code generation changes the module, so pass a clone when it is still needed."""
        shim: Any = self.shim
        machine = self._machine(module, CODEGEN_LEVEL_DEFAULT)
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        started = time.perf_counter()
        failed = shim.llmc_emit(
            machine, module, int(filetype == "asm"), ctypes.byref(data), ctypes.byref(size)
        )
        self._llvm_seconds += time.perf_counter() - started
        if failed:
            raise LLVMError("the target cannot emit this kind of file")
        try:
            return ctypes.string_at(data.value or 0, size.value) if size.value else b""
        finally:
            shim.llmc_free(data)

    def _lower_text(self, ir: bytes, filetype: str) -> bytes:
        if self.shim is None:
            started = time.perf_counter()
            result = run_command(
                [self.toolchain.tool("llc"), f"-filetype={filetype}", "-o", "-", "-"],
                timeout=600,
                input=ir,
                subject="the optimized module",
            )
            self._llvm_seconds += time.perf_counter() - started
            return result.stdout
        context = self.lib.LLVMContextCreate()
        try:
            # The emitted module is consumed by code generation and freed with its context.
            return self.emit(self.parse(context, ir), filetype)
        finally:
            self.lib.LLVMContextDispose(context)

    def _finish(
        self,
        module: int,
        want_ir: bool,
        want_asm: bool,
        cached_steps: int,
        memo: bool = True,
        want_obj: bool = False,
    ) -> Evaluation:
        """Measures ``module`` the way ``opt -S | llc`` would see it.

        With ``memo``, an optimized IR text measured before is not lowered again.
        """
        count = self.count_instructions(module)
        text = self.print_module(module)
        key = ir_hash(text)
        sizes = self._measured.get(key) if memo and not want_obj else None
        obj = None
        if sizes is None:
            obj = self._lower_text(text.encode(), "obj")
            size = berkeley_size(obj)
            sizes = (size.text, size.data, size.bss)
            if memo:
                self._measured[key] = sizes
                if len(self._measured) > MEASUREMENTS_KEPT:
                    self._measured.popitem(last=False)
        else:
            self._measured.move_to_end(key)
        assembly = None
        if want_asm:
            assembly = self._lower_text(text.encode(), "asm").decode("utf-8", errors="replace")
        seconds, self._llvm_seconds = self._llvm_seconds, 0.0
        return Evaluation(
            *sizes,
            count,
            text if want_ir else None,
            assembly,
            cached_steps,
            seconds,
            key,
            obj if want_obj else None,
        )

    def evaluate(
        self,
        program_id: str,
        pipeline: str | None,
        *,
        want_ir: bool = False,
        want_asm: bool = False,
        memo: bool = True,
        want_obj: bool = False,
    ) -> Evaluation:
        """Applies a whole pipeline (None: none) to a kept program and measures it.

        With ``memo``, an optimized IR text measured before is not lowered again;
        ``want_obj`` returns the object file too.
        """
        with self._optimized(program_id, pipeline) as module:
            return self._finish(module, want_ir, want_asm, 0, memo=memo, want_obj=want_obj)

    @contextlib.contextmanager
    def _optimized(self, program_id: str, pipeline: str | None) -> Iterator[int]:
        """A kept program parsed in a context of its own, ``pipeline`` run on it (the
        context, and the module with it, is freed on leaving)."""
        self._llvm_seconds = 0.0
        context = self.lib.LLVMContextCreate()
        try:
            module = self.parse(context, self._text(program_id))
            if pipeline is not None:
                self.run_passes(module, pipeline)
            yield module
        finally:
            self.lib.LLVMContextDispose(context)

    def count(self, program_id: str, pipeline: str | None) -> tuple[int, str, float]:
        """Applies a whole pipeline to a kept program and counts the optimized IR,
        generating no code: (instructions, optimized-IR hash, seconds in LLVM)."""
        with self._optimized(program_id, pipeline) as module:
            count = self.count_instructions(module)
            key = ir_hash(self.print_module(module))
        seconds, self._llvm_seconds = self._llvm_seconds, 0.0
        return count, key, seconds

    def evaluate_stepwise(
        self,
        program_id: str,
        elements: tuple[str, ...],
        *,
        use_cache: bool = True,
        want_ir: bool = False,
        want_asm: bool = False,
        lower: bool = True,
    ) -> Evaluation:
        """Applies top-level pipeline elements one at a time, reusing cached prefixes.

        Without ``lower`` the result is only counted (instructions, IR hash, IR text if
        wanted), and no code is generated.
        """
        state = self._state(program_id)
        self._llvm_seconds = 0.0
        start, source = 0, state.module
        if use_cache:
            for length in range(len(elements), 0, -1):
                cached = state.prefixes.get(elements[:length])
                if cached is not None:
                    state.prefixes.move_to_end(elements[:length])
                    start, source = length, cached
                    break
        module = self.lib.LLVMCloneModule(source)
        try:
            for index in range(start, len(elements)):
                self.run_passes(module, elements[index])
                if use_cache:
                    self._remember(state, elements[: index + 1], module)
                following = self.lib.LLVMCloneModule(module)
                if not use_cache:
                    self.lib.LLVMDisposeModule(module)
                module = following
            if not lower:
                return self._counted(module, want_ir, start)
            return self._finish(module, want_ir, want_asm, start, memo=use_cache)
        finally:
            self.lib.LLVMDisposeModule(module)

    def _counted(self, module: int, want_ir: bool, cached_steps: int) -> Evaluation:
        """``module`` counted and hashed, not lowered."""
        count = self.count_instructions(module)
        text = self.print_module(module)
        seconds, self._llvm_seconds = self._llvm_seconds, 0.0
        return Evaluation(
            0, 0, 0, count, text if want_ir else None, None, cached_steps, seconds, ir_hash(text), None, False
        )

    def _remember(self, state: _ProgramState, prefix: tuple[str, ...], module: int) -> None:
        """Keeps ``module`` as the state after ``prefix`` (takes ownership).

        The memory bound counts each state as its program's unoptimized instruction
        count; the least recently used states go first, the new one never.
        """
        old = state.prefixes.pop(prefix, None)
        if old is not None:
            self._cached_instructions -= state.instructions
            self.lib.LLVMDisposeModule(old)
        state.prefixes[prefix] = module
        self._cached_instructions += state.instructions
        for owner in [*self._programs.values(), state]:
            while self._cached_instructions > self.prefix_cache_instructions and owner.prefixes:
                if owner is state and len(owner.prefixes) == 1:
                    break
                _, evicted = owner.prefixes.popitem(last=False)
                self._cached_instructions -= owner.instructions
                self.lib.LLVMDisposeModule(evicted)

    def lower_text(self, ir: bytes, *, want_asm: bool = False) -> Evaluation:
        """Parses IR text and lowers it (the in-process ``llc``)."""
        context = self.lib.LLVMContextCreate()
        try:
            module = self.parse(context, ir)
            count = self.count_instructions(module)
            self.lib.LLVMDisposeModule(module)
        finally:
            self.lib.LLVMContextDispose(context)
        size = berkeley_size(self._lower_text(ir, "obj"))
        assembly = self._lower_text(ir, "asm").decode("utf-8", errors="replace") if want_asm else None
        return Evaluation(size.text, size.data, size.bss, count, None, assembly)
