"""The demo samples a tiny model learns: flag tuning prompts on IR of small C functions.

:data:`DEMO_SAMPLES` are three (prompt, answer) pairs in LLM Compiler's flag tuning form
(:data:`FLAG_TUNING_PROMPT`, as :mod:`llm_compiler.tasks.prompts` writes it), on the IR
of two small C functions as clang 19's ``-Oz`` front end emits it: a pass list with the
optimized code, an "already optimal" answer, and a longer prompt. They are what
``tests.models.tiny_models.hf_model_dir("demo")`` is fine-tuned on, so that a backend's
answers can be checked to the character; prompts run from 130 to 650 tokens.

:mod:`tests.models.tiny_models` re-exports the public names here.
"""

from __future__ import annotations

from typing import Final

#: The flag tuning prompt, as :mod:`llm_compiler.tasks.prompts` writes it.
FLAG_TUNING_PROMPT: Final = (
    "[INST] Tell me how to optimize this LLVM-IR for object file size:\n\n<code>{ir}</code> [/INST]"
)


_ADD_IR = """\
; Function Attrs: minsize nounwind optsize uwtable
define dso_local i32 @add(i32 noundef %0, i32 noundef %1) #0 {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  store i32 %0, ptr %3, align 4, !tbaa !5
  store i32 %1, ptr %4, align 4, !tbaa !5
  %5 = load i32, ptr %3, align 4, !tbaa !5
  %6 = load i32, ptr %4, align 4, !tbaa !5
  %7 = add nsw i32 %5, %6
  ret i32 %7
}

attributes #0 = { minsize nounwind optsize uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" \
"stack-protector-buffer-size"="8" "target-cpu"="x86-64" "tune-cpu"="generic" }
"""

_ADD_OPTIMIZED_IR = """\
; Function Attrs: minsize mustprogress nofree norecurse nosync nounwind optsize willreturn memory(none)
define dso_local i32 @add(i32 noundef %0, i32 noundef %1) local_unnamed_addr #0 {
  %3 = add nsw i32 %1, %0
  ret i32 %3
}
"""

_POPCOUNT_IR = """\
; Function Attrs: minsize nounwind optsize uwtable
define dso_local i32 @popcount(i32 noundef %0) #0 {
  %2 = alloca i32, align 4
  %3 = alloca i32, align 4
  store i32 %0, ptr %2, align 4, !tbaa !5
  call void @llvm.lifetime.start.p0(i64 4, ptr %3) #2
  store i32 0, ptr %3, align 4, !tbaa !5
  br label %4

4:                                                ; preds = %7, %1
  %5 = load i32, ptr %2, align 4, !tbaa !5
  %6 = icmp ne i32 %5, 0
  br i1 %6, label %7, label %14

7:                                                ; preds = %4
  %8 = load i32, ptr %2, align 4, !tbaa !5
  %9 = and i32 %8, 1
  %10 = load i32, ptr %3, align 4, !tbaa !5
  %11 = add i32 %10, %9
  store i32 %11, ptr %3, align 4, !tbaa !5
  %12 = load i32, ptr %2, align 4, !tbaa !5
  %13 = lshr i32 %12, 1
  store i32 %13, ptr %2, align 4, !tbaa !5
  br label %4, !llvm.loop !9

14:                                               ; preds = %4
  %15 = load i32, ptr %3, align 4, !tbaa !5
  call void @llvm.lifetime.end.p0(i64 4, ptr %3) #2
  ret i32 %15
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1
"""

_POPCOUNT_OPTIMIZED_IR = """\
define dso_local i32 @popcount(i32 noundef %0) local_unnamed_addr #0 {
  %2 = tail call i32 @llvm.ctpop.i32(i32 %0)
  ret i32 %2
}
"""

#: Three flag tuning samples: a pass list with code, "already optimal", a longer prompt.
DEMO_SAMPLES: Final = (
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_IR),
        "Run opt -p 'module(function(sroa,instcombine))' to reduce the binary size from 72 bytes "
        f"to 65 bytes:\n\n<code>{_ADD_OPTIMIZED_IR}</code>",
    ),
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_OPTIMIZED_IR),
        "The input code is already optimal: its binary size is 65 bytes.",
    ),
    (
        FLAG_TUNING_PROMPT.format(ir=_POPCOUNT_IR),
        "Run opt -p 'module(function(sroa,simplifycfg,instcombine),loop-mssa(licm))' to reduce the "
        f"binary size from 120 bytes to 81 bytes:\n\n<code>{_POPCOUNT_OPTIMIZED_IR}</code>",
    ),
)
