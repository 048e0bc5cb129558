"""The IR instruction count equals the sum of opt's TotalInstructionCount per function."""

from __future__ import annotations

import ctypes

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.toolchain.ir import count_instructions, defined_functions
from llm_compiler.toolchain.llvm import Toolchain

EXCEPTIONS_CPP = r"""
#include <stdexcept>
int risky(int v) { if (v > 3) throw std::runtime_error("big"); return v * 2; }
int guarded(int v) {
  try { return risky(v); }
  catch (const std::runtime_error &) { return -1; }
  catch (...) { return -2; }
}
int dispatch(int op, int v) {
  switch (op) { case 0: return v; case 1: return -v; case 7: return v * v; case 9: return 0; }
  return guarded(v);
}
"""


class LLVMCounter:
    """An independent count: LLVM's own IR reader through the LLVM-C API (ctypes)."""

    def __init__(self, toolchain: Toolchain) -> None:
        candidates = sorted((toolchain.bin_dir.parent / "lib").glob("libLLVM*.so*"))
        if not candidates:
            pytest.skip("no shared libLLVM next to the toolchain")
        lib = ctypes.CDLL(str(candidates[0]))
        vp = ctypes.c_void_p
        for name, restype, argtypes in [
            ("LLVMContextCreate", vp, []),
            ("LLVMContextDispose", None, [vp]),
            (
                "LLVMCreateMemoryBufferWithMemoryRangeCopy",
                vp,
                [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p],
            ),
            ("LLVMParseIRInContext", ctypes.c_int, [vp, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]),
            ("LLVMGetFirstFunction", vp, [vp]),
            ("LLVMGetNextFunction", vp, [vp]),
            ("LLVMGetFirstBasicBlock", vp, [vp]),
            ("LLVMGetNextBasicBlock", vp, [vp]),
            ("LLVMGetFirstInstruction", vp, [vp]),
            ("LLVMGetNextInstruction", vp, [vp]),
            ("LLVMDisposeModule", None, [vp]),
        ]:
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        self.lib = lib

    def count(self, ir: str) -> int:
        lib = self.lib
        data = ir.encode()
        context = lib.LLVMContextCreate()
        buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"ir")
        module, message = ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)) == 0
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
        lib.LLVMDisposeModule(module)
        lib.LLVMContextDispose(context)
        return total


@pytest.fixture(scope="module")
def llvm_counter(toolchain: Toolchain) -> LLVMCounter:
    return LLVMCounter(toolchain)


@pytest.mark.parametrize("pipeline", [None, "default<O0>", "default<Oz>", "default<O3>"])
def test_matches_llvm_on_examples(
    compiler: Compiler, example_programs: dict[str, Program], llvm_counter: LLVMCounter, pipeline: str | None
) -> None:
    for program in example_programs.values():
        ir = program.ir if pipeline is None else compiler.optimize(program, compiler.passes(pipeline))
        assert count_instructions(ir) == llvm_counter.count(ir), program.name


def test_switch_invoke_and_landingpad_continuations(
    compiler: Compiler,
    llvm_counter: LLVMCounter,
    write,  # type: ignore[no-untyped-def]
) -> None:
    program = compiler.load(write("exceptions.cpp", EXCEPTIONS_CPP))
    for pipeline in (None, "default<Oz>"):
        ir = program.ir if pipeline is None else compiler.optimize(program, compiler.passes(pipeline))
        assert "switch " in ir and "landingpad" in ir and "catch ptr" in ir and "to label" in ir
        assert count_instructions(ir) == llvm_counter.count(ir)


def test_counts_only_defined_function_bodies() -> None:
    ir = """
@g = global i32 0
declare i32 @ext(i32)
define i32 @f(i32 %x) {
entry:
  %y = add i32 %x, 1 ; comment
  br label %"quoted label"

"quoted label":                                   ; preds = %entry
  %z = call i32 @ext(i32 %y)
  switch i32 %z, label %out [
    i32 0, label %out
    i32 1, label %out
  ]

out:
  ret i32 %z
}
"""
    assert count_instructions(ir) == 5
    assert defined_functions(ir) == ["f"]
