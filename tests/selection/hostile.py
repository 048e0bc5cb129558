"""Bad model answers, generated: what a flag-tuning model may write that the tool must survive.

Every kind named in the module :mod:`tests.selection.test_hostile_answers` is drawn by
:func:`hostile_answers`: malformed prose, over-long lists and text, unknown and renamed
passes, option and shell injection, nested junk, another LLVM's names, empty answers
and binary. The bench (``bench/selection/bench_hostile_answers.py``) draws 1,000.
"""

from __future__ import annotations

from hypothesis import strategies as st

#: Passes this LLVM's searchable set has (a few of the plainest).
REAL = ("function(sroa)", "function(gvn)", "function(simplifycfg)", "module(globaldce)", "function(dce)")

#: Names of other LLVMs or of nothing: renamed in LLVM 19 (flattencfg), removed
#: (loop-reroll), newer than 19 (a few of 22's), or made up.
FOREIGN = (
    "flattencfg",
    "loop-reroll",
    "function(loop-reroll)",
    "function(expand-variadics)",
    "module(ctx-instr-gen)",
    "frobnicate",
    "instcombine<max-iterations=1000>",
    "loop-unroll<O99>",
    "simplifycfg<bonus-inst-threshold=99999999999999999999>",
)

#: Text that must never reach a command line as anything but a refused list.
INJECTIONS = (
    "instcombine;rm -rf /",
    "function(gvn) -load=/tmp/evil.so",
    "-passes=gvn --print-after-all",
    "gvn' -o /etc/passwd '",
    "$(touch /tmp/pwned)",
    "`id`",
    "gvn\n-load-pass-plugin=/tmp/x.so",
    "module(gvn)\x00module(dce)",
)

_identifier = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-<>=,()0123456789", min_size=1, max_size=30)


def _wrap(pipeline: str, before: int = 900, after: int = 800) -> str:
    prose = f"to reduce the binary size from {before} bytes to {after} bytes"
    return f"Run opt -p '{pipeline}' {prose}:\n\n<code>"


@st.composite
def _nested(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 60))
    inner = draw(st.sampled_from((*REAL, "", ",", "()", "<>")))
    opening = draw(st.sampled_from(("function(", "module(", "cgscc(", "loop(", "(")))
    closing = draw(st.integers(0, depth + 2))
    return opening * depth + inner + ")" * closing


def hostile_answers() -> st.SearchStrategy[str]:
    """One bad answer (module docstring)."""
    lists = st.one_of(
        st.lists(st.sampled_from((*FOREIGN, *REAL)), min_size=1, max_size=6).map(",".join),
        st.lists(_identifier, min_size=1, max_size=8).map(",".join),
        st.sampled_from(INJECTIONS),
        _nested(),
        st.integers(200, 3000).map(lambda n: ",".join(["function(sroa)"] * n)),  # over-long list
    )
    return st.one_of(
        lists.map(_wrap),
        lists.map(lambda text: f"-passes={text}"),
        st.tuples(lists, st.integers(-(10**12), 10**30), st.integers(-5, 10**30)).map(lambda t: _wrap(*t)),
        st.text(max_size=300),  # prose, anything
        st.just(""),
        st.sampled_from(("   ", "\n\n", "<code></code>", "Run opt -p '' to", "Run opt -p")),
        st.binary(max_size=200).map(lambda data: data.decode("latin-1")),
        st.integers(10_000, 200_000).map(lambda n: "Run opt -p 'function(gvn)" + "x" * n),  # over-long text
        st.sampled_from(REAL).map(lambda p: _wrap(p) + "\n" + "<code>" * 50),
    )
