"""Task prompts: the released models' literal formats, round trips, and refusal of anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList, PassNode, parse_pipeline
from llm_compiler.tasks.prompts import (
    DisassemblyPrompt,
    EmulationPrompt,
    EmulationTarget,
    FlagTuningPrompt,
    Prompt,
    PromptParseError,
    build_prompt,
    disassembly_prompt,
    emulation_prompt,
    flag_tuning_prompt,
    parse_disassembly_prompt,
    parse_emulation_prompt,
    parse_flag_tuning_prompt,
    parse_prompt,
)

IR = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n"
ASM = "f:\n\tmovl\t%edi, %eax\n\tretq\n"

KNOWN_PASSES = ["instcombine", "simplifycfg", "gvn", "sroa", "loop-mssa(licm)", "default<Oz>"]
pass_lists = st.lists(st.sampled_from(KNOWN_PASSES), min_size=1, max_size=8).map(
    lambda names: parse_pipeline(",".join(names))
)
code_texts = st.text().filter(lambda text: "</code>" not in text)
counts = st.integers(min_value=0, max_value=10**12)

emulation_prompts = st.builds(
    EmulationPrompt, code_texts, pass_lists, counts, counts, st.sampled_from(EmulationTarget)
)
prompts: st.SearchStrategy[Prompt] = st.one_of(
    emulation_prompts, st.builds(FlagTuningPrompt, code_texts), st.builds(DisassemblyPrompt, code_texts)
)


def test_emulation_ir_prompt_is_byte_exact() -> None:
    text = emulation_prompt(IR, parse_pipeline("module(default<Oz>),function(sroa)"), ir_count=3, bin_size=72)
    assert text == (
        "[INST] Give the LLVM-IR for the following code when optimized using opt -p "
        "'module(default<Oz>),function(sroa)':\n\n"
        "<code>define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n</code>\n\n"
        "The input code has instruction count 3 and binary size 72 bytes. [/INST]"
    )


def test_emulation_assembly_prompt_is_byte_exact() -> None:
    text = emulation_prompt(
        IR, parse_pipeline("instcombine"), ir_count=3, bin_size=72, target=EmulationTarget.ASSEMBLY
    )
    assert text == (
        "[INST] Give the assembly for the following code when optimized using opt -p 'instcombine':\n\n"
        "<code>define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n</code>\n\n"
        "The input code has instruction count 3 and binary size 72 bytes. [/INST]"
    )


def test_flag_tuning_prompt_is_byte_exact() -> None:
    assert flag_tuning_prompt(IR) == (
        "[INST] Tell me how to optimize this LLVM-IR for object file size:\n\n"
        "<code>define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n</code> [/INST]"
    )


def test_disassembly_prompt_is_byte_exact() -> None:
    assert disassembly_prompt(ASM) == (
        "[INST] Disassemble this code to LLVM-IR:\n\n<code>f:\n\tmovl\t%edi, %eax\n\tretq\n</code> [/INST]"
    )


@given(prompts)
@settings(max_examples=300)
def test_parse_of_build_is_identity(prompt: Prompt) -> None:
    assert parse_prompt(build_prompt(prompt)) == prompt


@given(emulation_prompts)
def test_specific_parsers_read_their_prompts(prompt: EmulationPrompt) -> None:
    assert parse_emulation_prompt(build_prompt(prompt)) == prompt
    flag_tuning = FlagTuningPrompt(prompt.ir)
    assert parse_flag_tuning_prompt(build_prompt(flag_tuning)) == flag_tuning
    disassembly = DisassemblyPrompt(prompt.ir)
    assert parse_disassembly_prompt(build_prompt(disassembly)) == disassembly


def test_whitespace_around_a_prompt_is_ignored() -> None:
    text = "\n " + flag_tuning_prompt(IR) + " \n"
    assert parse_prompt(text) == FlagTuningPrompt(IR)


@given(st.text())
@settings(max_examples=300)
def test_arbitrary_text_parses_or_raises_prompt_parse_error(text: str) -> None:
    try:
        parse_prompt(text)
    except PromptParseError as error:
        assert error.reason


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[INST] Disassemble this code to LLVM-IR:\n\n<code>truncated",
        "[INST] Tell me how to optimize this LLVM-IR for object file size:\n\n<code>a</code></code> [/INST]",
        "[INST] Give the LLVM-IR for the following code when optimized using opt -p 'sroa;rm -rf /':\n\n"
        "<code>x</code>\n\nThe input code has instruction count 1 and binary size 2 bytes. [/INST]",
        "[INST] Give the LLVM-IR for the following code when optimized using opt -p 'sroa':\n\n"
        "<code>x</code>\n\nThe input code has instruction count -1 and binary size 2 bytes. [/INST]",
        "[INST] Give the C for the following code when optimized using opt -p 'sroa':\n\n"
        "<code>x</code>\n\nThe input code has instruction count 1 and binary size 2 bytes. [/INST]",
        "Tell me how to optimize this LLVM-IR for object file size:\n\n<code>x</code>",
    ],
)
def test_malformed_prompts_are_refused(text: str) -> None:
    with pytest.raises(PromptParseError):
        parse_prompt(text)


def test_injected_pass_list_names_the_reason() -> None:
    text = (
        "[INST] Give the LLVM-IR for the following code when optimized using opt -p 'sroa;rm -rf /':\n\n"
        "<code>x</code>\n\nThe input code has instruction count 1 and binary size 2 bytes. [/INST]"
    )
    with pytest.raises(PromptParseError, match="invalid pass list") as caught:
        parse_emulation_prompt(text)
    assert "';'" in caught.value.reason


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: FlagTuningPrompt("a</code>b"), "</code>"),
        (lambda: DisassemblyPrompt(b"x"), "text"),  # type: ignore[arg-type]
        (lambda: EmulationPrompt(IR, PassList(), 1, 2), "pass list"),
        (lambda: EmulationPrompt(IR, PassList([PassNode("bad name")]), 1, 2), "not a valid pass list"),
        (lambda: EmulationPrompt(IR, "sroa", 1, 2), "PassList"),  # type: ignore[arg-type]
        (lambda: EmulationPrompt(IR, parse_pipeline("sroa"), -1, 2), "negative"),
        (lambda: EmulationPrompt(IR, parse_pipeline("sroa"), 1, True), "int"),
    ],
)
def test_invalid_fields_are_refused_when_made(make: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        make()  # type: ignore[operator]
