"""Pipeline syntax: round trips (property tests) and rejection of anything outside the grammar."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.errors import InvalidPassList
from llm_compiler.passes.pipeline import MAX_DEPTH, PassList, PassNode, parse_pipeline

NAMES = st.from_regex(r"[a-z0-9][a-z0-9-]{0,15}", fullmatch=True)
PARAMS = st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9_.;=-]{0,12}", fullmatch=True))


def nodes(depth: int = 3) -> st.SearchStrategy[PassNode]:
    leaf = st.builds(PassNode, NAMES, PARAMS, st.none())
    if depth == 0:
        return leaf
    nested = st.builds(PassNode, NAMES, PARAMS, st.lists(nodes(depth - 1), min_size=1, max_size=3).map(tuple))
    return st.one_of(leaf, nested)


pass_lists = st.lists(nodes(), min_size=1, max_size=6).map(PassList)


@given(pass_lists)
@settings(max_examples=300)
def test_parse_of_print_is_identity(passes: PassList) -> None:
    assert parse_pipeline(str(passes)) == passes


@given(pass_lists)
@settings(max_examples=300)
def test_print_of_parse_is_stable(passes: PassList) -> None:
    text = str(passes)
    assert str(parse_pipeline(text)) == text
    assert str(parse_pipeline(str(parse_pipeline(text)))) == text


@given(st.text(max_size=40))
@settings(max_examples=500)
def test_arbitrary_text_parses_or_raises_invalid_pass_list(text: str) -> None:
    try:
        passes = parse_pipeline(text)
    except InvalidPassList as error:
        assert error.text == text
    else:
        assert str(passes) == text


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("sroa dce", " "),
        ("sroa;rm -rf /", ";"),
        ("sroa,$(reboot)", "$"),
        ("sroa`id`", "`"),
        ("'sroa'", "'"),
        ('"sroa"', '"'),
        ("sroa\n-load=/tmp/evil.so", "\n"),
        ("-load=/tmp/evil.so", "-"),
        ("--passes=sroa", "-"),
        ("sroa|dce", "|"),
        ("sroa>out.ll", ">"),
        ("function(sroa", None),
        ("function(sroa))", ")"),
        ("sroa,,dce", ","),
        ("SROA", "S"),
        ("licm<allow speculation>", " "),
        ("licm<a>b>", "b"),
    ],
)
def test_injection_and_garbage_name_the_token(text: str, token: str | None) -> None:
    with pytest.raises(InvalidPassList) as caught:
        parse_pipeline(text)
    assert caught.value.token == token
    assert caught.value.position is not None
    assert repr(text) in str(caught.value)


def test_empty_and_too_deep() -> None:
    with pytest.raises(InvalidPassList, match="Empty"):
        parse_pipeline("")
    deep = "function(" * (MAX_DEPTH + 1) + "sroa" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(InvalidPassList, match="nested deeper"):
        parse_pipeline(deep)


def test_structure_of_a_real_pipeline() -> None:
    passes = parse_pipeline(
        "module(default<Oz>),function(sroa,loop-mssa(licm<allowspeculation>)),cgscc(inline)"
    )
    assert len(passes) == 3
    assert [leaf.name for leaf in passes.leaves()] == ["default", "sroa", "licm", "inline"]
    assert passes[1].children is not None and passes[1].children[1].name == "loop-mssa"
    assert (
        isinstance(passes[:2], PassList)
        and str(passes[:2]) == "module(default<Oz>),function(sroa,loop-mssa(licm<allowspeculation>))"
    )
    assert passes.id == parse_pipeline(str(passes)).id and len(passes.id) == 16
    assert hash(passes) == hash(parse_pipeline(str(passes)))
