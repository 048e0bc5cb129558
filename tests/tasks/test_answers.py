"""Task answers: round trips, released-model-style answers, and only the typed error on garbage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.errors import InvalidInput, InvalidPassList
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.tasks.answers import (
    AlreadyOptimalAnswer,
    AnswerParseError,
    DisassemblyAnswer,
    EmulationAnswer,
    FlagTuningAnswer,
    PassListAnswer,
    build_disassembly_answer,
    build_emulation_answer,
    build_flag_tuning_answer,
    extract_pass_list,
    parse_disassembly_answer,
    parse_emulation_answer,
    parse_flag_tuning_answer,
    try_extract_pass_list,
    try_parse_disassembly_answer,
    try_parse_emulation_answer,
    try_parse_flag_tuning_answer,
)

RELEASED = json.loads((Path(__file__).parent / "data" / "released_answers.json").read_text())["answers"]

KNOWN_PASSES = ["instcombine", "simplifycfg", "gvn", "sroa", "loop-mssa(licm)", "default<Oz>"]
pass_lists = st.lists(st.sampled_from(KNOWN_PASSES), min_size=1, max_size=8).map(
    lambda names: parse_pipeline(",".join(names))
)
code_texts = st.text().filter(lambda text: "</code>" not in text)
counts = st.integers(min_value=0, max_value=10**12)

emulation_answers = st.builds(EmulationAnswer, code_texts, counts, counts)
flag_tuning_answers: st.SearchStrategy[FlagTuningAnswer] = st.one_of(
    st.builds(PassListAnswer, pass_lists, counts, counts, code_texts), st.builds(AlreadyOptimalAnswer, counts)
)
disassembly_answers = st.builds(DisassemblyAnswer, code_texts)

PARSERS: list[Callable[[str], object]] = [
    parse_emulation_answer,
    parse_flag_tuning_answer,
    parse_disassembly_answer,
    extract_pass_list,
]
TRY_PARSERS: list[Callable[[str], object]] = [
    try_parse_emulation_answer,
    try_parse_flag_tuning_answer,
    try_parse_disassembly_answer,
    try_extract_pass_list,
]

# Pieces of answers, so that random texts reach deep into the parsers.
FRAGMENTS = st.sampled_from(
    [
        "<code>",
        "</code>",
        "opt -p '",
        "opt -p ",
        "-passes=",
        "--passes ",
        '"',
        "'",
        "`",
        "instcombine",
        "default<Oz>",
        "loop-mssa(licm)",
        ";rm -rf /",
        ",",
        " from ",
        " to ",
        " bytes",
        "instruction count ",
        "binary size ",
        "binary sise is ",
        "already optimal",
        "9" * 40,
        "1,000,000,000,000,000,000,000,000,000,000,000",
        "0",
        "\n",
        " ",
    ]
)
answer_like_texts = st.lists(st.one_of(FRAGMENTS, st.text(max_size=5)), max_size=20).map("".join)


# Round trips -------------------------------------------------------------------------------


@given(emulation_answers)
@settings(max_examples=200)
def test_emulation_answer_round_trips(answer: EmulationAnswer) -> None:
    assert parse_emulation_answer(build_emulation_answer(answer)) == answer


@given(flag_tuning_answers)
@settings(max_examples=200)
def test_flag_tuning_answer_round_trips(answer: FlagTuningAnswer) -> None:
    text = build_flag_tuning_answer(answer)
    assert parse_flag_tuning_answer(text) == answer
    if isinstance(answer, PassListAnswer):
        assert extract_pass_list(text) == answer.passes


@given(disassembly_answers)
@settings(max_examples=200)
def test_disassembly_answer_round_trips(answer: DisassemblyAnswer) -> None:
    assert parse_disassembly_answer(build_disassembly_answer(answer)) == answer


def test_documented_formats_are_byte_exact() -> None:
    passes = parse_pipeline("module(default<Oz>),function(sroa)")
    assert build_emulation_answer(EmulationAnswer("IR", 3, 72)) == (
        "The optimized code has instruction count 3 and binary size 72 bytes:\n\n<code>IR</code>"
    )
    assert build_flag_tuning_answer(PassListAnswer(passes, 120, 96, "IR")) == (
        "Run opt -p 'module(default<Oz>),function(sroa)' to reduce the binary size from 120 bytes "
        "to 96 bytes:\n\n<code>IR</code>"
    )
    assert build_flag_tuning_answer(AlreadyOptimalAnswer(120)) == (
        "The input code is already optimal: its binary size is 120 bytes."
    )
    assert build_disassembly_answer(DisassemblyAnswer("IR")) == "<code>IR</code>"


# Released-model-style answers --------------------------------------------------------------


@pytest.mark.parametrize("entry", RELEASED, ids=[entry["name"] for entry in RELEASED])
def test_released_style_answers_are_read(entry: dict[str, Any]) -> None:
    expected = entry["expected"]
    answer: object
    if entry["task"] == "emulation":
        answer = parse_emulation_answer(entry["text"])
        assert answer == EmulationAnswer(expected["code"], expected["ir_count"], expected["bin_size"])
    elif entry["task"] == "flag_tuning":
        answer = parse_flag_tuning_answer(entry["text"])
        if expected["passes"] is None:
            assert answer == AlreadyOptimalAnswer(expected["size_before"])
        else:
            passes = parse_pipeline(expected["passes"])
            assert answer == PassListAnswer(
                passes, expected["size_before"], expected["size_after"], expected["code"]
            )
            assert extract_pass_list(entry["text"]) == passes
    else:
        assert entry["task"] == "disassembly"
        assert parse_disassembly_answer(entry["text"]) == DisassemblyAnswer(expected["ir"])


def test_released_style_set_covers_the_misspelling() -> None:
    assert any("sise" in entry["text"] for entry in RELEASED)


def test_the_first_complete_code_block_is_the_answer() -> None:
    text = "<code>first</code> then <code>second</code>"
    assert parse_disassembly_answer(text) == DisassemblyAnswer("first")
    nested = "<code>a <code> b</code> c</code>"
    assert parse_disassembly_answer(nested) == DisassemblyAnswer("a <code> b")


def test_numbers_inside_code_are_not_read_as_the_prediction() -> None:
    text = "<code>; instruction count 9 and binary size 9 bytes</code>"
    with pytest.raises(AnswerParseError, match="instruction count"):
        parse_emulation_answer(text)


def test_extract_pass_list_tolerates_a_truncated_answer() -> None:
    text = "Run opt -p 'sroa,gvn' to reduce the binary size from 100 bytes to <code>define i32 @f("
    assert extract_pass_list(text) == parse_pipeline("sroa,gvn")
    with pytest.raises(AnswerParseError, match="not closed"):
        parse_flag_tuning_answer(text.replace("to <code>", "to 90 bytes:\n\n<code>"))


@pytest.mark.parametrize(
    ("text", "pipeline"),
    [
        ("opt -p 'sroa'", "sroa"),
        ('opt -p "sroa,gvn"', "sroa,gvn"),
        ("opt -p sroa,gvn to", "sroa,gvn"),
        ("opt -p sroa,gvn.", "sroa,gvn"),
        ("opt    -p     'gvn'", "gvn"),
        ("opt -passes=default<Oz>", "default<Oz>"),
        ("opt -passes='default<Oz>'", "default<Oz>"),
        ('opt --passes "loop-mssa(licm)"', "loop-mssa(licm)"),
        ("opt -p=instcombine", "instcombine"),
        ("Run `-p 'simplifycfg'` first", "simplifycfg"),
        ("Use -p `simplifycfg`", "simplifycfg"),
    ],
)
def test_pass_list_spellings(text: str, pipeline: str) -> None:
    assert extract_pass_list(text) == parse_pipeline(pipeline)


# Garbage gives the typed error -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "opt -p 'instcombine;rm -rf /'",
        "opt -p instcombine;rm -rf /",
        'opt -passes="sroa && reboot"',
        "opt -p '$(reboot)'",
        "opt -p ''",
    ],
)
def test_injected_pass_lists_are_refused_with_the_reason(text: str) -> None:
    answer = f"{text} to reduce the binary size from 10 bytes to 5 bytes:\n\n<code>x</code>"
    for parse in (parse_flag_tuning_answer, extract_pass_list):
        with pytest.raises(AnswerParseError, match="invalid pass list") as caught:
            parse(answer)
        assert isinstance(caught.value.pass_list_error, InvalidPassList)
        assert caught.value.reason.startswith("invalid pass list")
        assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "I cannot help with that.",
        "<code>define i32 @f() {",
        "The optimized code has instruction count 3 and binary size 72 bytes:\n\n<code>define i32",
        "Run opt -p 'sroa' to reduce the binary size from 10 bytes to 5 bytes:\n\n<code>define",
        "Run opt -p 'sroa' to make it smaller:\n\n<code>x</code>",
        "<code>x</code>",
        "The input code has binary size.",
        "instruction count 99999999999999999999999999999999999999 and binary size 1 bytes <code></code>",
    ],
)
def test_garbage_is_refused(text: str) -> None:
    with pytest.raises(AnswerParseError):
        parse_emulation_answer(text)
    with pytest.raises(AnswerParseError):
        parse_flag_tuning_answer(text)


@pytest.mark.parametrize("text", ["", "\t", "no code here", "<code>unclosed", "</code>x<code>"])
def test_disassembly_garbage_is_refused(text: str) -> None:
    assert isinstance(try_parse_disassembly_answer(text), AnswerParseError)


@given(st.one_of(st.text(), answer_like_texts))
@settings(max_examples=500)
def test_arbitrary_text_raises_only_the_typed_error(text: str) -> None:
    for parse in PARSERS:
        try:
            parse(text)
        except AnswerParseError as error:
            assert error.reason
            assert error.text == text
    for try_parse in TRY_PARSERS:
        result = try_parse(text)
        if isinstance(result, AnswerParseError):
            assert result.text == text


def test_try_parse_returns_the_answer_or_the_error() -> None:
    assert try_parse_emulation_answer(build_emulation_answer(EmulationAnswer("x", 1, 2))) == EmulationAnswer(
        "x", 1, 2
    )
    assert try_extract_pass_list("opt -p 'gvn'") == parse_pipeline("gvn")
    error = try_parse_flag_tuning_answer("opt -p 'gvn;id'")
    assert isinstance(error, AnswerParseError)
    assert error.pass_list_error is not None


def test_non_text_is_the_typed_error() -> None:
    with pytest.raises(AnswerParseError, match="text"):
        parse_disassembly_answer(b"<code>x</code>")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: EmulationAnswer("a</code>", 1, 2), "</code>"),
        (lambda: EmulationAnswer("a", -1, 2), "negative"),
        (lambda: PassListAnswer(PassList(), 1, 2, "x"), "pass list"),
        (lambda: PassListAnswer("sroa", 1, 2, "x"), "PassList"),  # type: ignore[arg-type]
        (lambda: AlreadyOptimalAnswer(1.5), "int"),  # type: ignore[arg-type]
        (lambda: DisassemblyAnswer(None), "text"),  # type: ignore[arg-type]
    ],
)
def test_invalid_answers_are_refused_when_made(make: Callable[[], object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        make()


def test_already_optimal_has_no_passes() -> None:
    assert AlreadyOptimalAnswer(5).passes is None
