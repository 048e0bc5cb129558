"""Pass lists: the ``opt -passes=`` pipeline syntax as an immutable value.

A pipeline text such as ``module(globalopt),function(sroa,loop-mssa(licm<allowspeculation>))``
is a comma-separated sequence of *elements*. An element is a pass name, optionally
followed by parameters in angle brackets and, for pass-manager adaptors
(``module``, ``cgscc``, ``function``, ``loop``, ``loop-mssa``), a nested pipeline in
parentheses::

    pipeline := element ("," element)*
    element  := NAME ("<" PARAMS ">")? ("(" pipeline ")")?
    NAME     := [a-z0-9] [a-z0-9-]*
    PARAMS   := [A-Za-z0-9_.;=-]*

:class:`PassList` is a tuple of :class:`PassNode` (the top-level elements); ``str()``
prints the canonical text, and ``parse_pipeline(str(p)) == p``. Parsing here checks
syntax only, with an error naming the offending character; whether the names are
known passes of an LLVM version, and may be searched, is the job of
:class:`llm_compiler.passes.searchable.PassSet`, which every path to ``opt`` goes
through.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from llm_compiler.errors import InvalidPassList

#: Pass-manager adaptors that take a nested pipeline.
ADAPTORS = frozenset({"module", "cgscc", "function", "loop", "loop-mssa"})

_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
_PARAMS_RE = re.compile(r"[A-Za-z0-9_.;=-]*")

#: Deepest nesting of adaptors accepted (opt's real pipelines nest 4 deep).
MAX_DEPTH = 16

#: Longest pipeline text accepted (a 50-pass list of wrapped passes is ~1.5 kB).
MAX_PIPELINE_CHARS = 20_000


@dataclass(frozen=True)
class PassNode:
    """One element of a pipeline: a pass, or an adaptor around a nested pipeline.

    Attributes:
        name: The pass or adaptor name, e.g. ``"licm"`` or ``"function"``.
        params: The text between ``<`` and ``>``, or None when there is none.
        children: The nested pipeline of an adaptor, or None for a plain pass.
    """

    name: str
    params: str | None = None
    children: tuple[PassNode, ...] | None = None

    def __str__(self) -> str:
        text = self.name
        if self.params is not None:
            text += f"<{self.params}>"
        if self.children is not None:
            text += "(" + ",".join(str(child) for child in self.children) + ")"
        return text

    @property
    def is_adaptor(self) -> bool:
        return self.children is not None

    def leaves(self) -> Iterator[PassNode]:
        """The plain passes inside this element, depth first."""
        if self.children is None:
            yield self
        else:
            for child in self.children:
                yield from child.leaves()


class PassList(tuple[PassNode, ...]):
    """An immutable ``opt`` pipeline: a tuple of top-level :class:`PassNode`.

    Example:
        >>> passes = parse_pipeline("module(constmerge),function(sroa)")
        >>> str(passes)
        'module(constmerge),function(sroa)'
        >>> len(passes)
        2
    """

    def __new__(cls, nodes: Iterable[PassNode] = ()) -> PassList:
        return super().__new__(cls, tuple(nodes))

    def __str__(self) -> str:
        return ",".join(str(node) for node in self)

    def __repr__(self) -> str:
        return f"PassList({str(self)!r})"

    def __add__(self, other: tuple[PassNode, ...]) -> PassList:  # type: ignore[override]
        return PassList(tuple(self) + tuple(other))

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        item = super().__getitem__(index)
        return PassList(item) if isinstance(index, slice) else item

    @property
    def pipeline(self) -> str:
        """The exact text given to ``opt -passes=``."""
        return str(self)

    @property
    def id(self) -> str:
        """A stable identifier: the first 16 hex digits of the pipeline's SHA-256."""
        return hashlib.sha256(self.pipeline.encode()).hexdigest()[:16]

    def leaves(self) -> Iterator[PassNode]:
        """All plain passes of the pipeline, in order."""
        for node in self:
            yield from node.leaves()

    @classmethod
    def concat(cls, lists: Iterable[Iterable[PassNode]]) -> PassList:
        """Joins several pass lists (or searchable-set members) into one."""
        return cls(node for passes in lists for node in passes)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def fail(self, what: str, position: int | None = None) -> InvalidPassList:
        position = self.pos if position is None else position
        token = self.text[position : position + 1] if position < len(self.text) else ""
        shown = repr(token) if token else "the end of the text"
        return InvalidPassList(
            f"Invalid pass list {self.text!r}: {what} at character {position + 1} ({shown}). "
            "A pass list is opt's -passes syntax, e.g. 'module(globalopt),function(sroa)'.",
            text=self.text,
            token=token or None,
            position=position,
        )

    def pipeline(self) -> tuple[PassNode, ...]:
        nodes = [self.element()]
        while self.pos < len(self.text) and self.text[self.pos] == ",":
            self.pos += 1
            nodes.append(self.element())
        return tuple(nodes)

    def element(self) -> PassNode:
        match = _NAME_RE.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a pass name")
        name = match.group()
        self.pos = match.end()
        params = None
        if self.pos < len(self.text) and self.text[self.pos] == "<":
            params_match = _PARAMS_RE.match(self.text, self.pos + 1)
            assert params_match is not None  # the pattern accepts the empty string
            end = params_match.end()
            if end >= len(self.text) or self.text[end] != ">":
                raise self.fail(f"parameters of {name!r} must end with '>'", end)
            params = params_match.group()
            self.pos = end + 1
        children = None
        if self.pos < len(self.text) and self.text[self.pos] == "(":
            self.pos += 1
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"adaptors nested deeper than {MAX_DEPTH} levels")
            children = self.pipeline()
            self.depth -= 1
            if self.pos >= len(self.text) or self.text[self.pos] != ")":
                raise self.fail(f"expected ')' to close {name}(...)")
            self.pos += 1
        return PassNode(name, params, children)


def parse_pipeline(text: str) -> PassList:
    """Parses ``opt -passes`` text into a :class:`PassList` (syntax only).

    Args:
        text: The pipeline text. Whitespace, quotes and any character outside the
            grammar in the module docstring are rejected, never passed on.

    Raises:
        InvalidPassList: The text is empty, too long or not in the grammar; the error
            names the offending character and its position.
    """
    if not isinstance(text, str):
        raise InvalidPassList(f"A pass list must be text, not {type(text).__name__}.")
    if not text:
        raise InvalidPassList("Empty pass list: give at least one pass.", text=text)
    if len(text) > MAX_PIPELINE_CHARS:
        raise InvalidPassList(
            f"Pass list of {len(text)} characters is longer than {MAX_PIPELINE_CHARS}.", text=text
        )
    parser = _Parser(text)
    nodes = parser.pipeline()
    if parser.pos != len(text):
        raise parser.fail("unexpected character")
    return PassList(nodes)


def joinable(first: PassNode, second: PassNode) -> bool:
    """Whether two neighbouring elements can run in one pass manager: groups of the same
    manager and parameters (``function(x),function(y)``), or a function group after a
    ``cgscc`` group (it then runs on each SCC right after inlining into it)."""
    if first.children is None or second.children is None:
        return False
    same = first.name == second.name and first.params == second.params
    return same or (first.name == "cgscc" and second.name == "function")


def join_nodes(first: PassNode, second: PassNode) -> PassNode:
    """The one element that runs ``first`` then ``second`` (:func:`joinable` ones) in
    one pass manager: ``function(x),function(y)`` -> ``function(x,y)``, ``cgscc(i),function(x)``
    -> ``cgscc(i,function(x))``."""
    assert first.children is not None and second.children is not None
    if first.name == second.name and first.params == second.params:
        inner = _join_inside(first.children + second.children)
        return PassNode(first.name, first.params, inner)
    return PassNode(first.name, first.params, (*first.children, second))


def _join_inside(children: tuple[PassNode, ...]) -> tuple[PassNode, ...]:
    """Joins neighbouring loop groups of a function group (``loop(x),loop(y)`` -> ``loop(x,y)``)."""
    joined: list[PassNode] = []
    for child in children:
        if joined and child.children is not None and child.name in ("loop", "loop-mssa"):
            last = joined[-1]
            if last.children is not None and (last.name, last.params) == (child.name, child.params):
                joined[-1] = PassNode(last.name, last.params, last.children + child.children)
                continue
        joined.append(child)
    return tuple(joined)
