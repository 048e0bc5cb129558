"""Tests of the CompilerGym InstCount and Autophase vectors read from textual IR."""

from __future__ import annotations

import ctypes
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.gym.features import AUTOPHASE_NAMES, INST_COUNT_NAMES, autophase, inst_count
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.llvm import Toolchain

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def features(ir: str) -> dict[str, int]:
    return dict(zip(AUTOPHASE_NAMES, autophase(ir), strict=True))


def counts(ir: str) -> dict[str, int]:
    return dict(zip(INST_COUNT_NAMES, inst_count(ir), strict=True))


def test_names_are_compiler_gyms() -> None:
    assert len(INST_COUNT_NAMES) == 70 and len(set(INST_COUNT_NAMES)) == 70
    assert INST_COUNT_NAMES[:6] == ("TotalInsts", "TotalBlocks", "TotalFuncs", "Ret", "Br", "Switch")
    assert INST_COUNT_NAMES[-3:] == ("InsertValue", "LandingPad", "Freeze")
    assert INST_COUNT_NAMES.index("UserOp1") == 60  # Instruction.def: after Select, before VAArg
    assert len(AUTOPHASE_NAMES) == 56 and len(set(AUTOPHASE_NAMES)) == 56
    assert AUTOPHASE_NAMES[:4] == ("BBNumArgsHi", "BBNumArgsLo", "onePred", "onePredOneSuc")
    assert AUTOPHASE_NAMES[-3:] == ("TotalFuncs", "ArgsPhi", "testUnary")


PHIS = """
declare i32 @g(i32, i32, i32, i32, i32)

define i32 @phis(i32 %n, i1 %flag) {
entry:
  switch i32 %n, label %a [
    i32 0, label %b
    i32 64, label %c
    i32 5, label %d
  ]
a:
  br label %d
b:
  br label %d
c:
  br label %d
d:                                   ; preds: entry, a, b, c
  %p1 = phi i32 [ 0, %entry ], [ 1, %a ], [ 7, %b ], [ %n, %c ]
  %p2 = phi i64 [ 1, %entry ], [ 2, %a ], [ 3, %b ], [ 4, %c ]
  br i1 %flag, label %e, label %e
e:
  %q = phi i32 [ %p1, %d ], [ %p1, %d ]
  %r = tail call i32 @g(i32 noundef 1, i32 %q, i32 0, i32 3, i32 4)
  ret i32 %r
}
"""


def test_phis_switch_and_edges() -> None:
    f = features(PHIS)
    assert f["TotalFuncs"] == 2  # the declaration of @g counts, as in CompilerGym
    assert f["TotalBlocks"] == 6 and f["TotalInsts"] == 10  # switch; 3 br; 2 phi, br; phi, call, ret
    assert f["NumPHIInst"] == 3
    assert f["ArgsPhi"] == 10  # 4 + 4 + 2 incoming values
    assert f["BBNumArgsHi"] == 1  # %d: 8 incoming values (> 5)
    assert f["BBNumArgsLo"] == 1  # %e: 2 incoming values (1 to 5)
    assert f["BB03Phi"] == 2 and f["BBNoPhi"] == 4  # %d and %e hold phis, the other four none
    assert f["BeginPhi"] == 2  # a phi is the first instruction of %d and of %e
    assert f["NumEdges"] == 4 + 3 + 2  # switch: default and 3 cases; a, b, c: 1 each; d: 2 (same target)
    assert f["oneSuccessor"] == 3  # a, b, c
    assert f["twoSuccessor"] == 1  # d (both arms to %e count)
    assert f["onePred"] == 3  # a, b, c (each a switch target once)
    assert f["twoPred"] == 1  # e, reached by both arms of one br
    assert f["morePreds"] == 1  # d: from entry, a, b, c
    assert f["onePredOneSuc"] == 3  # a, b, c
    assert f["CriticalCount"] == 3  # entry -> d (d has 4 preds), d -> e twice (e has 2 preds)
    assert f["BranchCount"] == 4 and f["UncondBranches"] == 3  # br in a, b, c, d; d's is conditional
    # Integer constants: switch cases i32 0, 64, 5; phi %p1 i32 0, 1, 7; phi %p2 i64 1..4;
    # call i32 1, 0, 3, 4.
    assert f["const32Bit"] == 3 + 3 + 4
    assert f["const64Bit"] == 4
    assert f["numConstZeroes"] == 3  # case 0, phi 0, call argument 0
    assert f["numConstOnes"] == 3  # phi %p1's 1, phi %p2's 1, call argument 1
    assert f["returnInt"] == 1  # the call of @g returns i32
    assert f["TotalMemInst"] == 1  # the call


BINARY = """
@g = global i32 0
@alias = alias i32 (), ptr @seven

define i32 @seven() {
  ret i32 7
}

define i64 @binary(i32 %x, i64 %y, float %f) {
  %slot = alloca i32, align 4
  %array = alloca i8, i64 16, align 1
  store i32 1, ptr %slot, align 4
  %a = add nsw i32 %x, 1
  %b = mul i32 2, %a
  %c = sub i32 %a, %b
  %d = xor i64 %y, -1
  %e = fadd fast float %f, 1.000000e+00
  %h = or disjoint i32 %a, undef
  %i = icmp eq i32 %c, 0
  %j = select i1 %i, i64 0, i64 1
  %k = getelementptr inbounds [4 x i32], ptr @g, i64 0, i64 %j
  %l = load i32, ptr getelementptr inbounds ([4 x i32], ptr @g, i64 0, i64 2), align 4
  %m = call i32 @seven()
  %n = call i32 @alias()
  %o = call ptr @seven()
  %o2 = call i64 @seven()
  %p = zext i32 %l to i64
  %q = fneg float %e
  br label %done
done:
  ret i64 %p
}
"""


def test_binary_operators_constants_and_calls() -> None:
    f = features(BINARY)
    assert f["TotalFuncs"] == 2  # @seven and @binary; the alias is no function
    # add (1), mul (2), xor (-1), fadd (1.0), or (undef); sub has none.
    assert f["binaryConstArg"] == 5
    # i32: alloca %slot's implicit 1, store 1, add 1, mul 2, icmp 0, ret 7.
    assert f["const32Bit"] == 6
    # i64: alloca's explicit 16, xor -1, select 0 and 1, gep 0; the constant expression's are no operands.
    assert f["const64Bit"] == 5
    assert f["numConstOnes"] == 4  # alloca %slot's implicit 1, store 1, add 1, select 1
    assert f["numConstZeroes"] == 3  # icmp 0, select 0, gep 0 (-1 and 2 and 16 are neither)
    # @seven() as i32; the alias is no function; as ptr or i64, the call's type is not @seven's.
    assert f["returnInt"] == 1
    assert f["NumCallInst"] == 4
    assert f["TotalMemInst"] == 2 + 1 + 1 + 1 + 4  # alloca x2, store, gep, load, calls
    assert f["testUnary"] == 2 + 1 + 1 + 1  # alloca x2, load, zext, fneg
    assert f["UncondBranches"] == 1 and f["BranchCount"] == 1
    assert f["onePredOneSuc"] == 0 and f["onePred"] == 1  # %done: one pred, no successor
    assert f["oneSuccessor"] == 1  # the entry block of @binary
    c = counts(BINARY)
    assert c["TotalBlocks"] == 3  # @seven's block, @binary's entry and %done
    assert c["Alloca"] == 2 and c["FNeg"] == 1 and c["FAdd"] == 1 and c["Select"] == 1
    assert sum(c.values()) - c["TotalInsts"] - c["TotalBlocks"] - c["TotalFuncs"] == c["TotalInsts"]


MODERN = """
define void @f(ptr %p, i64 %n) {
entry:
  %a = ptrtoaddr ptr %p to i64
  %b = freeze i64 %a
    #dbg_value(i64 %b, !1, !DIExpression(), !2)
  call void @llvm.dbg.value(metadata i64 0, metadata !1, metadata !DIExpression())
  call void @llvm.memset.p0.i64(ptr align 8 %p, i8 0, i64 %n, i1 false)
  ret void
}
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)
declare void @llvm.dbg.value(metadata, metadata, metadata)
"""


def test_modern_opcodes_and_debug_info() -> None:
    c = counts(MODERN)
    assert c["TotalFuncs"] == 3  # one definition and two intrinsic declarations
    assert c["PtrToInt"] == 1  # ptrtoaddr (LLVM 22) has no LLVM 10 slot: counted as ptrtoint
    assert c["Freeze"] == 1
    assert c["Call"] == 2  # the debug record is not an instruction, the debug intrinsic is
    assert c["TotalInsts"] == 5
    f = features(MODERN)
    assert f["numConstZeroes"] == 2  # memset's i8 0 and i1 false; the metadata i64 0 is no operand
    assert f["const64Bit"] == 0
    assert f["testUnary"] == 1  # ptrtoaddr (a cast); freeze is no UnaryInstruction in LLVM 10


def test_fast_on_a_large_module(toolchain: Toolchain, tmp_path: Path) -> None:
    ir = clang_ir(toolchain, EXAMPLES / "strings.c", tmp_path)
    module = ir * max(1, 2000 // ir.count("\n"))  # about 2,000 lines (names repeat: no matter)
    start = time.perf_counter()
    for _ in range(5):
        autophase(module)
        inst_count(module)
    # A few milliseconds each in practice; the bound only catches a blow-up on a shared machine.
    assert (time.perf_counter() - start) / 5 < 0.25


@pytest.mark.parametrize(
    "ir",
    [
        "",
        "not IR at all\n}\n{",
        "define i32 @f(\n  %x = add i32 , \n  br label\n  switch i32 [\n  phi [ , ]\n",
        "define void @g() {\n  call (((( @h(i32 1\n  %y = = =\n  store i32 ] ) >\n}\n}\n",
        "  ret i32 5\nattributes #0 = { noinline }\n" * 3,
    ],
)
def test_odd_input_gives_full_vectors(ir: str) -> None:
    assert len(inst_count(ir)) == 70
    assert len(autophase(ir)) == 56
    assert all(value >= 0 for value in autophase(ir))


_TOKENS = (
    "define", "declare", "{", "}", "[", "]", "(", ")", "<", ">", "%x", "@f", "=", ",", "i32", "1", "0",
    "label", "%b", "b:", "phi", "switch", "call", "br", "alloca", "add", "ret", '"', ";", "\n", "i64", "ptr",
)  # fmt: skip
"""Pieces of IR, to be strung together at random."""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=60))
def test_never_raises(tokens: list[str]) -> None:
    ir = " ".join(tokens)
    assert len(inst_count(ir)) == 70 and len(autophase(ir)) == 56


# LLVM's reader through its C API computes the same definitions as CompilerGym's C++ ---------

_OPCODE_NUMBERS = {
    1: "Ret", 2: "Br", 3: "Switch", 4: "IndirectBr", 5: "Invoke", 7: "Unreachable", 67: "CallBr",
    66: "FNeg", 8: "Add", 9: "FAdd", 10: "Sub", 11: "FSub", 12: "Mul", 13: "FMul", 14: "UDiv",
    15: "SDiv", 16: "FDiv", 17: "URem", 18: "SRem", 19: "FRem", 20: "Shl", 21: "LShr", 22: "AShr",
    23: "And", 24: "Or", 25: "Xor", 26: "Alloca", 27: "Load", 28: "Store", 29: "GetElementPtr",
    30: "Trunc", 31: "ZExt", 32: "SExt", 33: "FPToUI", 34: "FPToSI", 35: "UIToFP", 36: "SIToFP",
    37: "FPTrunc", 38: "FPExt", 39: "PtrToInt", 40: "IntToPtr", 41: "BitCast", 60: "AddrSpaceCast",
    42: "ICmp", 43: "FCmp", 44: "PHI", 45: "Call", 46: "Select", 49: "VAArg", 50: "ExtractElement",
    51: "InsertElement", 52: "ShuffleVector", 53: "ExtractValue", 54: "InsertValue", 68: "Freeze",
    55: "Fence", 56: "AtomicCmpXchg", 57: "AtomicRMW", 58: "Resume", 59: "LandingPad",
    61: "CleanupRet", 62: "CatchRet", 63: "CatchPad", 64: "CleanupPad", 65: "CatchSwitch",
}  # fmt: skip
"""LLVM-C's ``LLVMOpcode`` values (llvm-c/Core.h) and their ``Instruction.def`` names."""


_BINARY = frozenset(
    {"Add", "FAdd", "Sub", "FSub", "Mul", "FMul", "UDiv", "SDiv", "FDiv", "URem", "SRem", "FRem"}
    | {"Shl", "LShr", "AShr", "And", "Or", "Xor"}
)
_MEMORY = frozenset({"GetElementPtr", "Load", "Store", "Call", "Invoke", "Alloca"})
_LLVM_INTEGER_TYPE_KIND = 8  # LLVMTypeKind's LLVMIntegerTypeKind


class Reference:
    """Both vectors by CompilerGym's definitions (InstCount.cc), over LLVM's own reader (LLVM-C)."""

    def __init__(self, toolchain: Toolchain) -> None:
        candidates = sorted((toolchain.bin_dir.parent / "lib").glob("libLLVM*.so*"))
        if not candidates:
            pytest.skip("no shared libLLVM next to the toolchain")
        lib = ctypes.CDLL(str(candidates[0]))
        vp, i, u = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        signatures: list[tuple[str, type | None, list[type]]] = [
            ("LLVMContextCreate", vp, []),
            ("LLVMContextDispose", None, [vp]),
            ("LLVMCreateMemoryBufferWithMemoryRangeCopy", vp, [ctypes.c_char_p, ctypes.c_size_t, vp]),
            ("LLVMParseIRInContext", i, [vp, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]),
            ("LLVMDisposeModule", None, [vp]),
            ("LLVMGetOperand", vp, [vp, u]),
            ("LLVMGetSuccessor", vp, [vp, u]),
            ("LLVMConstIntGetZExtValue", ctypes.c_ulonglong, [vp]),
        ]
        for name in [
            "LLVMGetFirstFunction", "LLVMGetNextFunction", "LLVMGetFirstBasicBlock", "LLVMGetNextBasicBlock",
            "LLVMGetFirstInstruction", "LLVMGetNextInstruction", "LLVMIsAConstantInt", "LLVMIsAConstant",
            "LLVMTypeOf", "LLVMGetBasicBlockTerminator", "LLVMIsACallInst", "LLVMIsAFunction",
            "LLVMIsAUnaryInstruction", "LLVMGetCalledValue", "LLVMGetCalledFunctionType",
            "LLVMGlobalGetValueType", "LLVMGetReturnType",
        ]:  # fmt: skip
            signatures.append((name, vp, [vp]))
        for name in [
            "LLVMGetInstructionOpcode", "LLVMGetNumOperands", "LLVMIsConditional", "LLVMGetTypeKind",
            "LLVMGetIntTypeWidth", "LLVMGetNumSuccessors", "LLVMCountIncoming",
        ]:  # fmt: skip
            signatures.append((name, i, [vp]))
        for name, result, arguments in signatures:
            getattr(lib, name).restype = result
            getattr(lib, name).argtypes = arguments
        self.lib = lib

    def __call__(self, ir: str) -> tuple[dict[str, int], dict[str, int]]:
        """The InstCount and Autophase vectors of ``ir``, by name."""
        lib = self.lib
        data = ir.encode()
        context = lib.LLVMContextCreate()
        buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"ir")
        module, message = ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)) == 0
        inst: Counter[str] = Counter()
        auto: Counter[str] = Counter()
        function = lib.LLVMGetFirstFunction(module)
        while function:
            inst["TotalFuncs"] += 1
            blocks: list[tuple[int, list[int]]] = []
            block = lib.LLVMGetFirstBasicBlock(function)
            while block:
                inst["TotalBlocks"] += 1
                terminator = lib.LLVMGetBasicBlockTerminator(block)
                targets = [
                    lib.LLVMGetSuccessor(terminator, k) for k in range(lib.LLVMGetNumSuccessors(terminator))
                ]
                blocks.append((block, targets))
                size = phis = phi_args = 0
                instruction = lib.LLVMGetFirstInstruction(block)
                while instruction:
                    name = _OPCODE_NUMBERS[lib.LLVMGetInstructionOpcode(instruction)]
                    inst[name] += 1
                    self._instruction(instruction, name, auto)
                    if name == "PHI":
                        auto["BeginPhi"] += size == 0
                        phis += 1
                        phi_args += lib.LLVMCountIncoming(instruction)
                    size += 1
                    instruction = lib.LLVMGetNextInstruction(instruction)
                auto["ArgsPhi"] += phi_args
                auto["BBNoPhi"] += phis == 0
                auto["BB03Phi"] += 0 < phis <= 3
                auto["BBHiPhi"] += phis > 3
                auto["BBNumArgsHi"] += phi_args > 5
                auto["BBNumArgsLo"] += 1 <= phi_args <= 5
                auto["BlockLow"] += size < 15
                auto["BlockMid"] += 15 <= size <= 500
                block = lib.LLVMGetNextBasicBlock(block)
            preds = Counter(target for _, targets in blocks for target in targets)
            for block, targets in blocks:
                succ, pred = len(targets), preds[block]
                auto["NumEdges"] += succ
                if succ > 1:
                    auto["CriticalCount"] += sum(preds[target] > 1 for target in targets)
                for key, condition in [
                    ("oneSuccessor", succ == 1), ("twoSuccessor", succ == 2), ("onePred", pred == 1),
                    ("twoPred", pred == 2), ("morePreds", pred > 2),
                    ("onePredOneSuc", pred == 1 and succ == 1), ("twoPredOneSuc", pred == 2 and succ == 1),
                    ("onePredTwoSuc", pred == 1 and succ == 2), ("twoEach", pred == 2 and succ == 2),
                ]:  # fmt: skip
                    auto[key] += condition
            function = lib.LLVMGetNextFunction(function)
        lib.LLVMDisposeModule(module)
        lib.LLVMContextDispose(context)
        inst["TotalInsts"] = sum(inst[name] for name in INST_COUNT_NAMES[3:])
        for name in AUTOPHASE_NAMES:
            if name.startswith("Num") and name.endswith("Inst"):
                auto[name] = inst[name[3:-4]]
        for name in ("TotalBlocks", "TotalInsts", "TotalFuncs"):
            auto[name] = inst[name]
        auto["TotalMemInst"] = sum(inst[name] for name in _MEMORY)
        return {name: inst[name] for name in INST_COUNT_NAMES}, {name: auto[name] for name in AUTOPHASE_NAMES}

    def _instruction(self, instruction: int, name: str, auto: Counter[str]) -> None:
        lib = self.lib
        if name == "Br":
            auto["BranchCount"] += 1
            auto["UncondBranches"] += not lib.LLVMIsConditional(instruction)
        operands = [lib.LLVMGetOperand(instruction, k) for k in range(lib.LLVMGetNumOperands(instruction))]
        for operand in operands:
            if lib.LLVMIsAConstantInt(operand):
                width = lib.LLVMGetIntTypeWidth(lib.LLVMTypeOf(operand))
                value = lib.LLVMConstIntGetZExtValue(operand) if width <= 64 else -1
                auto["const32Bit"] += width == 32
                auto["const64Bit"] += width == 64
                auto["numConstOnes"] += value == 1
                auto["numConstZeroes"] += value == 0
        if name in _BINARY:
            auto["binaryConstArg"] += any(lib.LLVMIsAConstant(operand) for operand in operands[:2])
        # LLVM 10 (and 19) do not take freeze for a UnaryInstruction, LLVM 22 does: keep LLVM 10's.
        auto["testUnary"] += bool(lib.LLVMIsAUnaryInstruction(instruction)) and name != "Freeze"
        if lib.LLVMIsACallInst(instruction):
            callee = lib.LLVMIsAFunction(lib.LLVMGetCalledValue(instruction))
            # getCalledFunction(): the callee, if a function of the call's own type.
            if callee and lib.LLVMGlobalGetValueType(callee) == lib.LLVMGetCalledFunctionType(instruction):
                returned = lib.LLVMGetReturnType(lib.LLVMGlobalGetValueType(callee))
                auto["returnInt"] += lib.LLVMGetTypeKind(returned) == _LLVM_INTEGER_TYPE_KIND


@pytest.fixture(scope="module")
def reference(toolchain: Toolchain) -> Reference:
    return Reference(toolchain)


def clang_ir(toolchain: Toolchain, source: Path, tmp_path: Path, *flags: str) -> str:
    output = tmp_path / f"{source.stem}.ll"
    clang = toolchain.bin_dir / ("clang++" if source.suffix == ".cpp" else "clang")
    command = [str(clang), "-O0", "-Xclang", "-disable-O0-optnone", "-S", "-emit-llvm", *flags]
    subprocess.run([*command, "-o", str(output), str(source)], check=True, timeout=120)
    return output.read_text()


@pytest.mark.parametrize("optimize", [False, True], ids=["O0", "O2"])
@pytest.mark.parametrize("source", sorted(EXAMPLES.glob("*.c*")), ids=lambda path: path.name)
def test_matches_llvm_reader_on_clang_output(
    toolchain: Toolchain, reference: Reference, source: Path, tmp_path: Path, optimize: bool
) -> None:
    ir = clang_ir(toolchain, source, tmp_path)
    if optimize:  # phis, selects, critical edges and vector code
        ir = subprocess.run(
            [str(toolchain.bin_dir / "opt"), "-O2", "-S"],
            input=ir,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    ours = counts(ir)
    expected, expected_features = reference(ir)
    assert ours["TotalInsts"] == count_instructions(ir)
    assert (
        sum(value for name, value in ours.items() if name not in INST_COUNT_NAMES[:3]) == ours["TotalInsts"]
    )
    assert ours == expected
    assert features(ir) == expected_features


@pytest.mark.parametrize("ir", [PHIS, BINARY], ids=["phis", "binary"])
def test_hand_written_modules_match_llvm_reader(reference: Reference, ir: str) -> None:
    expected, expected_features = reference(ir)  # also checks that LLVM 19 reads the module
    assert counts(ir) == expected
    assert features(ir) == expected_features


def test_debug_info_module(toolchain: Toolchain, reference: Reference, tmp_path: Path) -> None:
    ir = clang_ir(toolchain, EXAMPLES / "crc32.c", tmp_path, "-g")
    assert "#dbg_" in ir or "llvm.dbg" in ir
    expected, expected_features = reference(ir)
    assert counts(ir) == expected
    assert features(ir) == expected_features
