"""The IR features: exact counts on real front-end IR and on hand-written IR, robustness, scaling."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.core.compiler import Compiler
from llm_compiler.predictor.features import (
    FEATURE_NAMES,
    FEATURE_VERSION,
    OPCODES,
    feature_dict,
    ir_features,
    log_scaled,
)
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.llvm import Toolchain

ROOT = Path(__file__).resolve().parents[2]

MIXED_C = """\
extern int ext(int);
struct S { int a[8]; };
static int helper(int x) { return x * 2; }
int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i); return s; }
int sw(int x) {
  switch (x) { case 1: return 10; case 2: return 20; case 5: return ext(x); default: return 0; }
}
void cp(struct S *d, const struct S *s) { __builtin_memcpy(d, s, sizeof *s); }
int (*fp)(int);
int ind(int x) { return fp(x); }
const char *str = "hello";
"""

LOOPS_C = """\
__attribute__((noinline)) int twice(int x) { return 2 * x; }
static inline __attribute__((always_inline)) int inc(int x) { return x + 1; }
int nested(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      s += twice(j);
  do { s = inc(s); } while (s < 100);
  return s;
}
"""

# One function with a loop, a switch and a call; the scaling test repeats it.
UNIT_C = """\
int f{k}(int n, int *a) {{
  int s = 0;
  for (int i = 0; i < n; i++) {{
    switch (a[i]) {{
      case 1: s += ext(i); break;
      case 7: s -= 3; break;
      case 9: s *= a[i + 1]; break;
      default: s ^= i;
    }}
  }}
  return s;
}}
"""

# Named labels, phis, an attribute group: every count below is derived by hand.
LOOP_IR = """\
; ModuleID = 'hand'
source_filename = "hand.c"

define internal i32 @count(i32 %n) #0 {
entry:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %loop, label %exit

loop:                                             ; preds = %loop, %entry
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add nsw i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop, !llvm.loop !0

exit:                                             ; preds = %loop, %entry
  %r = phi i32 [ 0, %entry ], [ %next, %loop ]
  ret i32 %r
}

attributes #0 = { noinline nounwind "no-inline-line-tables" "frame-pointer"="none" }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.mustprogress"}
"""

# The syntax the parser must survive: quoted labels, invoke, landingpad, volatile and atomic
# accesses, call prefixes, fast-math flags, inline asm with a ';' in its string, varargs.
SYNTAX_IR = """\
%struct.pair = type { i32, i32 }

@.str = private unnamed_addr constant [4 x i8] c"a;b\\00", align 1
@g = global i32 0, align 4
@p = global ptr null, align 8
@q = external global i32
@a = alias i32, ptr @g

declare void @ext(ptr)
declare i32 @__gxx_personality_v0(...)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg)
declare float @llvm.fabs.f32(float)

define void @callee(ptr %p) alwaysinline {
  store volatile i32 1, ptr %p, align 4
  ret void
}

define float @syntax(ptr %p, float %x, i32 %k, ...) personality ptr @__gxx_personality_v0 {
entry:
  %a = load atomic i32, ptr %p seq_cst, align 4
  %f = fadd fast float %x, 1.000000e+00
  %g = tail call fast float @llvm.fabs.f32(float %f)
  notail call void @ext(ptr %p) ; a comment with "a quote
  call void @llvm.memset.p0.i64(ptr align 4 %p, i8 0, i64 16, i1 false)
  %gep = getelementptr inbounds %struct.pair, ptr %p, i64 1, i32 1
  %fp = load ptr, ptr @p, align 8
  call void %fp(ptr %gep)
  call void asm sideeffect "nop; nop", "~{dirflag}"()
  switch i32 %k, label %"default case" [
    i32 0, label %one
    i32 5, label %two
  ]

"default case":                                   ; preds = %entry
  invoke void @callee(ptr %p)
          to label %one unwind label %lpad

one:                                              ; preds = %"default case", %entry
  br label %two

two:                                              ; preds = %one, %entry
  %r = phi float [ %g, %entry ], [ %f, %one ]
  store float %r, ptr %p, align 4
  ret float %r

lpad:                                             ; preds = %"default case"
  %lp = landingpad { ptr, i32 }
          cleanup
  resume { ptr, i32 } %lp
}

define void @tail(ptr %p) {
  musttail call void @callee(ptr %p)
  ret void
}
"""


@pytest.fixture(scope="module")
def compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    """One engine is enough: only the front end's IR is used."""
    with Compiler(toolchain, engine="subprocess") as compiler:
        yield compiler


def _ir(compiler: Compiler, directory: Path, name: str, source: str) -> str:
    path = directory / name
    path.write_text(source)
    return compiler.load(path).ir


def _expect(features: dict[str, float], expected: dict[str, float]) -> None:
    actual = {name: features[name] for name in expected}
    assert actual == expected


# ---------------------------------------------------------------------------------------
# Names and vectors


def test_names_are_unique_and_aligned_with_the_vector() -> None:
    assert isinstance(FEATURE_VERSION, int)
    assert len(set(FEATURE_NAMES)) == len(FEATURE_NAMES)
    assert all(name.isidentifier() and name == name.lower() for name in FEATURE_NAMES)
    assert 70 <= len(FEATURE_NAMES) <= 130
    assert [f"op_{op}" for op in OPCODES] == [name for name in FEATURE_NAMES if name.startswith("op_")][:-1]
    vector = ir_features(LOOP_IR)
    assert len(vector) == len(FEATURE_NAMES)
    assert all(type(value) is float for value in vector)
    assert list(feature_dict(LOOP_IR).values()) == list(vector)


@pytest.mark.parametrize("text", ["", "\n\n", "; only a comment\n!0 = !{}\n", 'target triple = "x86_64"\n'])
def test_no_functions_give_zeros(text: str) -> None:
    assert ir_features(text) == (0.0,) * len(FEATURE_NAMES)


def test_log_scaled() -> None:
    assert log_scaled([]) == ()
    assert log_scaled([0.0, math.e - 1, 3.0]) == pytest.approx((0.0, 1.0, math.log(4.0)))
    assert log_scaled([-(math.e - 1)]) == pytest.approx((-1.0,))
    assert len(log_scaled(ir_features(LOOP_IR))) == len(FEATURE_NAMES)


# ---------------------------------------------------------------------------------------
# Hand-written IR


def test_named_labels_loop(compiler: Compiler) -> None:
    compiler.load_ir(LOOP_IR)  # LLVM accepts it
    features = feature_dict(LOOP_IR)
    _expect(
        features,
        {
            "functions_defined": 1, "functions_declared": 0, "functions_internal": 1,
            "functions_noinline": 1, "functions_alwaysinline": 0, "function_arguments": 1,
            "basic_blocks": 3, "instructions": 8, "max_function_instructions": 8, "max_function_blocks": 3,
            "op_icmp": 2, "op_br": 2, "op_phi": 2, "op_add": 1, "op_ret": 1,
            "branches_conditional": 2, "branches_unconditional": 0, "phi_incoming": 4,
            "blocks_one_successor": 0, "blocks_many_successors": 2,
            "blocks_one_predecessor": 0, "blocks_many_predecessors": 2,
            "critical_edges": 4, "loops_back_edges": 1,
            "types_i1": 2, "types_i32": 6, "types_pointer": 0,
            "const_int_zero": 3, "const_int_one": 1, "const_int_other": 0,
        },
    )  # fmt: skip
    assert features["mean_block_instructions"] == pytest.approx(8 / 3)
    assert features["instructions"] == count_instructions(LOOP_IR)


def test_syntax_variety(compiler: Compiler) -> None:
    compiler.load_ir(SYNTAX_IR)  # LLVM accepts it
    features = feature_dict(SYNTAX_IR)
    _expect(
        features,
        {
            "functions_defined": 3, "functions_declared": 2, "intrinsics_declared": 2,
            "functions_alwaysinline": 1, "functions_noinline": 0, "functions_varargs": 1,
            "function_arguments": 5, "functions_internal": 0,
            "global_variables": 4, "global_constants": 1, "struct_types": 1,
            "string_constants": 1, "string_constant_bytes": 4,
            "basic_blocks": 7, "instructions": 21, "max_function_instructions": 17,
            "op_call": 6, "op_invoke": 1, "op_landingpad": 1, "op_resume": 1, "op_switch": 1,
            "op_load": 2, "op_store": 2, "op_fadd": 1, "op_getelementptr": 1, "op_phi": 1, "op_ret": 3,
            "op_other": 0,
            "calls_defined": 2, "calls_declared": 1, "calls_intrinsic": 2, "calls_mem_intrinsic": 1,
            "calls_indirect": 1, "calls_inline_asm": 1,
            "switch_cases": 2, "branches_unconditional": 1, "branches_conditional": 0, "phi_incoming": 2,
            "blocks_one_successor": 1, "blocks_many_successors": 2,
            "blocks_one_predecessor": 2, "blocks_many_predecessors": 2,
            "critical_edges": 3, "loops_back_edges": 0,
            "loads_integer": 1, "loads_pointer": 1, "loads_float": 0,
            "stores_integer": 1, "stores_float": 1, "stores_pointer": 0, "memory_volatile": 1,
            "types_float": 6, "types_struct": 3,
            "const_int_zero": 3, "const_int_one": 3, "const_int_other": 2,
        },
    )  # fmt: skip
    assert features["instructions"] == count_instructions(SYNTAX_IR)


def test_switch_on_one_line_counts_like_the_printed_one() -> None:
    printed = "  switch i32 %k, label %d [\n    i32 0, label %a\n    i32 5, label %b\n  ]\n"
    one_line = "  switch i32 %k, label %d [ i32 0, label %a i32 5, label %b ]\n"
    blocks = "a:\n  br label %d\nb:\n  br label %d\nd:\n  ret void\n"

    def module(switch: str) -> str:
        return f"define void @f(i32 %k) {{\n{switch}{blocks}}}\n"

    assert ir_features(module(printed)) == ir_features(module(one_line))
    features = feature_dict(module(one_line))
    _expect(
        features, {"switch_cases": 2, "basic_blocks": 4, "blocks_many_predecessors": 1, "critical_edges": 1}
    )


# ---------------------------------------------------------------------------------------
# Front-end IR


def test_counts_of_a_small_c_program(compiler: Compiler, tmp_path: Path) -> None:
    ir = _ir(compiler, tmp_path, "mixed.c", MIXED_C)
    features = feature_dict(ir)
    _expect(
        features,
        {
            "functions_defined": 5, "functions_declared": 1, "functions_internal": 1,
            "function_arguments": 6, "global_variables": 3, "string_constants": 1,
            "string_constant_bytes": 6, "functions_noinline": 0,
            "op_ret": 5, "op_switch": 1, "switch_cases": 3, "op_icmp": 1, "op_mul": 1,
            "calls_defined": 1, "calls_declared": 1, "calls_mem_intrinsic": 1, "calls_indirect": 1,
            "calls_inline_asm": 0, "branches_conditional": 1, "loops_back_edges": 1,
            "loads_pointer": 3, "stores_pointer": 2, "blocks_many_successors": 2,
        },
    )  # fmt: skip
    lifetime_calls = ir.count("call void @llvm.lifetime.")
    assert features["calls_intrinsic"] == 1 + lifetime_calls
    assert features["op_call"] == 4 + lifetime_calls  # helper, ext, memcpy, fp
    labels = sum(
        1 for line in ir.splitlines() if line[:1].isdigit() and line.split(";")[0].rstrip().endswith(":")
    )
    assert features["basic_blocks"] == features["functions_defined"] + labels


def test_loops_and_inline_attributes(compiler: Compiler, tmp_path: Path) -> None:
    features = feature_dict(_ir(compiler, tmp_path, "loops.c", LOOPS_C))
    _expect(
        features,
        {
            "functions_defined": 3, "functions_internal": 1, "functions_noinline": 1,
            "functions_alwaysinline": 1, "loops_back_edges": 3, "branches_conditional": 3,
            "calls_defined": 2, "calls_declared": 0, "op_ret": 3,
        },
    )  # fmt: skip


@pytest.mark.parametrize("name", ["crc32.c", "qsort_ints.c", "shapes.cpp"])
def test_examples_agree_with_the_instruction_count(compiler: Compiler, name: str) -> None:
    ir = compiler.load(ROOT / "examples" / name).ir
    features = feature_dict(ir)
    assert features["instructions"] == count_instructions(ir) > 0
    assert features["instructions"] == sum(value for key, value in features.items() if key.startswith("op_"))
    assert features["branches_conditional"] + features["branches_unconditional"] == features["op_br"]
    assert all(value >= 0 for value in features.values())
    assert ir_features(ir) == ir_features(ir)  # deterministic
    if name.endswith(".cpp"):
        assert features["op_invoke"] > 0 and features["op_landingpad"] > 0
        # Every invoke has two successors (its normal and its unwind destination).
        assert features["blocks_many_successors"] >= features["op_invoke"]


def test_counts_scale_with_the_module(compiler: Compiler, tmp_path: Path) -> None:
    """A module of many copies of one function counts that many times its counts."""
    copies = 40
    header = "extern int ext(int);\n"
    one = feature_dict(_ir(compiler, tmp_path, "one.c", header + UNIT_C.format(k=0)))
    many = feature_dict(
        _ir(compiler, tmp_path, "many.c", header + "".join(UNIT_C.format(k=k) for k in range(copies)))
    )
    assert many["instructions"] >= 2000
    per_module = {
        "functions_declared",
        "intrinsics_declared",
        "max_function_instructions",
        "max_function_blocks",
    }
    for name in FEATURE_NAMES:
        if name in per_module or name == "mean_block_instructions":
            assert many[name] == one[name], name
        else:
            assert many[name] == copies * one[name], name
    assert many["mean_block_instructions"] == pytest.approx(one["mean_block_instructions"])
    assert one["loops_back_edges"] == 1 and one["switch_cases"] == 3 and one["calls_declared"] == 1


# ---------------------------------------------------------------------------------------
# Robustness

_FRAGMENTS = [
    *SYNTAX_IR.splitlines(),
    *LOOP_IR.splitlines(),
    "define",
    "define i32 @",
    "define void @f(",
    "define void @f(i32 %x",
    "declare",
    "}",
    "{",
    ":",
    '"":',
    "%",
    "%x =",
    "% = call",
    "call",
    "tail",
    "  tail call",
    "switch i32 %x, label %d [",
    "]",
    "br label",
    "br i1 %c, label %a, label %a",
    "phi i32 [",
    "load",
    "store volatile",
    "attributes #",
    "attributes #1 = {",
    "@x = ",
    '@s = constant [99999999999999999999 x i8] c"',
    "to label %x",
    'call void asm "',
    "inrange(-8, 8)",
    "dereferenceable(",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=30)), max_size=40))
def test_never_raises_on_odd_input(lines: list[str]) -> None:
    vector = ir_features("\n".join(lines))
    assert len(vector) == len(FEATURE_NAMES)
    assert all(value >= 0 and math.isfinite(value) for value in vector)


def test_truncated_ir_never_raises() -> None:
    text = SYNTAX_IR + LOOP_IR
    for end in range(0, len(text) + 1, 5):
        assert len(ir_features(text[:end])) == len(FEATURE_NAMES)
