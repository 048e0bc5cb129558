"""Bindings to the LLVM-C API of the distribution's shared LLVM library (ctypes).

Only what the in-process engine needs: parse IR, clone and dispose modules, run a
pass pipeline with the new pass manager (``LLVMRunPasses``), print IR, walk
instructions, and emit object code or assembly to memory through a target machine
set up the way ``opt`` and ``llc`` set up theirs.

The library is found next to the toolchain (``<prefix>/lib/libLLVM*.so*``, e.g.
``/usr/lib/llvm-19/lib/libLLVM.so.19.1`` on Debian). Nothing here is imported by
``import llm_compiler``; loading fails with :class:`~llm_compiler.errors.ToolchainError`
naming what was looked for.
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint, c_void_p
from pathlib import Path

from llm_compiler.errors import ToolchainError
from llm_compiler.toolchain.llvm import Toolchain

# Targets whose initialisers are looked up in the library (those it lacks are skipped).
_TARGETS = (
    "AArch64", "AMDGPU", "ARM", "AVR", "BPF", "Hexagon", "Lanai", "LoongArch", "M68k",
    "Mips", "MSP430", "NVPTX", "PowerPC", "RISCV", "Sparc", "SystemZ", "VE",
    "WebAssembly", "X86", "XCore", "Xtensa",
)  # fmt: skip
_TARGET_PARTS = ("TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser")

# LLVMCodeGenOptLevel, LLVMRelocMode, LLVMCodeModel, LLVMCodeGenFileType values.
CODEGEN_LEVEL_NONE, CODEGEN_LEVEL_DEFAULT = 0, 2
RELOC_DEFAULT = 0
CODE_MODEL_DEFAULT = 0
ASSEMBLY_FILE, OBJECT_FILE = 0, 1

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "LLVMContextCreate": (c_void_p, []),
    "LLVMContextDispose": (None, [c_void_p]),
    "LLVMCreateMemoryBufferWithMemoryRangeCopy": (c_void_p, [c_char_p, c_size_t, c_char_p]),
    "LLVMGetBufferStart": (c_void_p, [c_void_p]),
    "LLVMGetBufferSize": (c_size_t, [c_void_p]),
    "LLVMDisposeMemoryBuffer": (None, [c_void_p]),
    "LLVMParseIRInContext": (c_int, [c_void_p, c_void_p, POINTER(c_void_p), POINTER(c_void_p)]),
    "LLVMCloneModule": (c_void_p, [c_void_p]),
    "LLVMDisposeModule": (None, [c_void_p]),
    "LLVMPrintModuleToString": (c_void_p, [c_void_p]),
    "LLVMDisposeMessage": (None, [c_void_p]),
    "LLVMGetTarget": (c_char_p, [c_void_p]),
    "LLVMGetDefaultTargetTriple": (c_void_p, []),
    "LLVMGetTargetFromTriple": (c_int, [c_char_p, POINTER(c_void_p), POINTER(c_void_p)]),
    "LLVMCreateTargetMachine": (c_void_p, [c_void_p, c_char_p, c_char_p, c_char_p, c_int, c_int, c_int]),
    "LLVMDisposeTargetMachine": (None, [c_void_p]),
    "LLVMSetTargetMachineAsmVerbosity": (None, [c_void_p, c_int]),
    "LLVMTargetMachineEmitToMemoryBuffer": (
        c_int,
        [c_void_p, c_void_p, c_int, POINTER(c_void_p), POINTER(c_void_p)],
    ),
    "LLVMCreatePassBuilderOptions": (c_void_p, []),
    "LLVMDisposePassBuilderOptions": (None, [c_void_p]),
    "LLVMRunPasses": (c_void_p, [c_void_p, c_char_p, c_void_p, c_void_p]),
    "LLVMGetErrorMessage": (c_void_p, [c_void_p]),
    "LLVMDisposeErrorMessage": (None, [c_void_p]),
    "LLVMGetFirstFunction": (c_void_p, [c_void_p]),
    "LLVMGetNextFunction": (c_void_p, [c_void_p]),
    "LLVMGetFirstBasicBlock": (c_void_p, [c_void_p]),
    "LLVMGetNextBasicBlock": (c_void_p, [c_void_p]),
    "LLVMGetFirstInstruction": (c_void_p, [c_void_p]),
    "LLVMGetNextInstruction": (c_void_p, [c_void_p]),
    "LLVMCountBasicBlocks": (c_uint, [c_void_p]),
    "LLVMEnablePrettyStackTrace": (None, []),
}


class LLVMError(Exception):
    """An error reported by an LLVM-C call (a parse error, a bad pipeline...)."""


def library_candidates(toolchain: Toolchain) -> list[Path]:
    """Shared libraries that may hold ``toolchain``'s LLVM-C API, best first."""
    lib = toolchain.bin_dir.parent / "lib"
    names = [f"libLLVM-{toolchain.major}.so", "libLLVM.so", f"libLLVM.so.{toolchain.major}"]
    found = [lib / name for name in names if (lib / name).exists()]
    return found + sorted(set(lib.glob("libLLVM*.so*")) - set(found))


class LLVMLibrary:
    """The loaded library with typed functions; one per process and toolchain."""

    def __init__(self, toolchain: Toolchain) -> None:
        candidates = library_candidates(toolchain)
        if not candidates:
            raise ToolchainError(
                f"No shared LLVM library (libLLVM*.so) next to {toolchain.bin_dir}; the in-process "
                "engine needs it (Debian: package libllvm19). Use --engine subprocess instead."
            )
        try:
            self.lib = ctypes.CDLL(str(candidates[0]))
        except OSError as error:
            raise ToolchainError(
                f"Could not load {candidates[0]}: {error}. Use --engine subprocess."
            ) from error
        self.path = candidates[0]
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                function = getattr(self.lib, name)
            except AttributeError as error:
                raise ToolchainError(
                    f"{self.path} lacks {name}; it is not an LLVM >= 17 C API. Use --engine subprocess."
                ) from error
            function.restype = restype
            function.argtypes = argtypes
        for target in _TARGETS:
            for part in _TARGET_PARTS:
                initialise = getattr(self.lib, f"LLVMInitialize{target}{part}", None)
                if initialise is not None:
                    initialise.restype = None
                    initialise()

    def take_message(self, pointer: int | None) -> str:
        """Copies and frees a ``char*`` LLVM allocated for us."""
        if not pointer:
            return ""
        text = ctypes.string_at(pointer).decode("utf-8", errors="replace")
        self.lib.LLVMDisposeMessage(pointer)
        return text

    def default_triple(self) -> str:
        return self.take_message(self.lib.LLVMGetDefaultTargetTriple())

    def target_machine(self, triple: str, level: int) -> int:
        """A target machine for ``triple`` with llc's defaults at codegen ``level``."""
        target, message = c_void_p(), c_void_p()
        if self.lib.LLVMGetTargetFromTriple(triple.encode(), byref(target), byref(message)):
            raise LLVMError(f"no target for triple {triple!r}: {self.take_message(message.value)}")
        machine = self.lib.LLVMCreateTargetMachine(
            target, triple.encode(), b"", b"", level, RELOC_DEFAULT, CODE_MODEL_DEFAULT
        )
        if not machine:
            raise LLVMError(f"could not create a target machine for {triple!r}")
        # llc prints verbose assembly (comments) by default; the C API does not.
        self.lib.LLVMSetTargetMachineAsmVerbosity(machine, 1)
        return int(machine)


@functools.lru_cache(maxsize=4)
def load_library(toolchain: Toolchain) -> LLVMLibrary:
    """Loads (once per process) the LLVM-C library of ``toolchain``.

    Raises:
        ToolchainError: No usable library; the message says to use the subprocess engine.
    """
    return LLVMLibrary(toolchain)
