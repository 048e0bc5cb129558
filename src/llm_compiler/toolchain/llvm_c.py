"""Bindings to the LLVM-C API of the distribution's shared LLVM library (ctypes).

Only what the in-process engine needs: parse IR, clone and dispose modules, run a
pass pipeline with the new pass manager (``LLVMRunPasses``), print IR, walk
instructions, and target machines set up the way ``opt`` and ``llc`` set up theirs.

Code generation is the exception: the C API's emitter differs from ``llc`` (no target
library information, static constructors in ``.ctors``), which changes objects. So
:func:`build_shim` compiles, once per LLVM version and with that LLVM's own headers
(Debian: ``llvm-19-dev``), a 40-line helper (``data/llc_shim.cpp``) that adds what
``llc`` adds; without the headers, the engine hands code generation to ``llc``.

The library is found next to the toolchain (``<prefix>/lib/libLLVM*.so*``, e.g.
``/usr/lib/llvm-19/lib/libLLVM.so.19.1`` on Debian). Nothing here is imported by
``import llm_compiler``; loading fails with :class:`~llm_compiler.errors.ToolchainError`
naming what was looked for.
"""

from __future__ import annotations

import ctypes
import functools
import os
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint, c_void_p
from importlib import resources
from pathlib import Path
from typing import Any

from llm_compiler.errors import ToolchainError
from llm_compiler.files import cache_dir
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

# Targets whose initialisers are looked up in the library (those it lacks are skipped).
_TARGETS = (
    "AArch64", "AMDGPU", "ARM", "AVR", "BPF", "Hexagon", "Lanai", "LoongArch", "M68k",
    "Mips", "MSP430", "NVPTX", "PowerPC", "RISCV", "Sparc", "SystemZ", "VE",
    "WebAssembly", "X86", "XCore", "Xtensa",
)  # fmt: skip
_TARGET_PARTS = ("TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser")

# LLVMCodeGenOptLevel, LLVMRelocMode and LLVMCodeModel values.
CODEGEN_LEVEL_NONE, CODEGEN_LEVEL_DEFAULT = 0, 2
RELOC_DEFAULT = 0
CODE_MODEL_DEFAULT = 0

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


def _shim_path(toolchain: Toolchain) -> Path:
    return cache_dir("llc-shim", f"llvm-{toolchain.version}") / "libllmc.so"


def build_shim(toolchain: Toolchain) -> tuple[Path | None, str]:
    """Compiles (once, cached) the helper that generates code exactly as llc does.

    Returns:
        The shared library, or None, and a sentence saying which it is and why.
    """
    target = _shim_path(toolchain)
    if target.is_file():
        return target, "code generation in-process, as llc does it"
    library = load_library(toolchain)
    source = resources.files("llm_compiler.toolchain") / "data" / "llc_shim.cpp"
    try:
        config = run_command([toolchain.tool("llvm-config"), "--cxxflags"], timeout=60).stdout_text.split()
        includes = run_command([toolchain.tool("llvm-config"), "--includedir"], timeout=60)
        headers = Path(includes.stdout_text.strip())
    except (ToolchainError, OSError) as error:
        return None, f"code generation by llc processes (no llvm-config: {error})"
    if not (headers / "llvm" / "Target" / "TargetMachine.h").is_file():
        return None, (
            "code generation by llc processes (LLVM's C++ headers are missing; install "
            f"llvm-{toolchain.major}-dev to generate code in-process)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    with resources.as_file(source) as path:
        try:
            run_command(
                [
                    toolchain.tool("clang++"), "-shared", "-fPIC", "-O2", *config, path,
                    str(library.path), f"-Wl,-rpath,{library.path.parent}", "-o", partial,
                ],
                timeout=300,
            )  # fmt: skip
        except ToolchainError as error:
            partial.unlink(missing_ok=True)
            return None, f"code generation by llc processes (the llc helper did not build: {error})"
    os.replace(partial, target)
    return target, "code generation in-process, as llc does it"


def load_shim(path: Path) -> Any:
    """Loads the llc helper built by :func:`build_shim`."""
    shim = ctypes.CDLL(str(path))
    shim.llmc_emit.restype = c_int
    shim.llmc_emit.argtypes = [c_void_p, c_void_p, c_int, POINTER(c_void_p), POINTER(c_size_t)]
    shim.llmc_free.restype = None
    shim.llmc_free.argtypes = [c_void_p]
    return shim
