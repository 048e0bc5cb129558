"""Every pass an ``opt`` binary knows, read from ``opt --print-passes``.

The registry is the ground truth for names, the IR level each pass works at, and
the grammar of its parameters (``instcombine<no-verify-fixpoint;max-iterations=N>``).
The searchable set is derived from it (:mod:`llm_compiler.passes.searchable`) and pass
lists are validated against both.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

#: IR levels, from the narrowest to the widest. A pass of a level may appear in a
#: pipeline of the same or a wider level (opt wraps it in an adaptor).
LEVELS = ("loop", "function", "cgscc", "module")
LEVEL_RANK = {"loop": 0, "loopnest": 0, "function": 1, "cgscc": 2, "module": 3}

_SECTION_RE = re.compile(
    r"^(Module|CGSCC|Function|LoopNest|Loop|Machine module|Machine function) "
    r"(passes with params|passes|alias analyses|analyses)(?: \(WIP\))?:$"
)
_LEVEL_OF_SECTION = {
    "Module": "module",
    "CGSCC": "cgscc",
    "Function": "function",
    "LoopNest": "loopnest",
    "Loop": "loop",
    "Machine module": "machine",
    "Machine function": "machine",
}


@dataclass(frozen=True)
class RegisteredPass:
    """One line of ``opt --print-passes``.

    Attributes:
        name: The pass name without parameters (``"instcombine"``, ``"print"``).
        level: ``module``, ``cgscc``, ``function``, ``loopnest``, ``loop`` or ``machine``.
        kind: ``"pass"``, ``"analysis"`` or ``"alias-analysis"``.
        params: For passes with parameters, the accepted options (``"O2"``,
            ``"max-iterations=N"``...); for a fixed spelling like ``print<domtree>``,
            that one parameter text; empty when the pass takes none.
        fixed_params: True when the parameter text is part of the name (``print<domtree>``).
    """

    name: str
    level: str
    kind: str
    params: tuple[str, ...] = ()
    fixed_params: bool = False

    @property
    def spelling(self) -> str:
        """How the pass is written in ``--print-passes``."""
        if not self.params:
            return self.name
        return f"{self.name}<{';'.join(self.params)}>"


class PassRegistry:
    """The passes of one ``opt``, indexed by name."""

    def __init__(self, entries: Iterable[RegisteredPass]) -> None:
        self.entries: tuple[RegisteredPass, ...] = tuple(entries)
        self._by_name: dict[str, list[RegisteredPass]] = {}
        for entry in self.entries:
            self._by_name.setdefault(entry.name, []).append(entry)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def lookup(self, name: str) -> list[RegisteredPass]:
        """All registrations of ``name`` (a name may exist at several levels)."""
        return list(self._by_name.get(name, ()))

    def transform_levels(self, name: str) -> set[str]:
        """The IR levels at which ``name`` is a transform (not analysis) pass."""
        return {entry.level for entry in self._by_name.get(name, ()) if entry.kind == "pass"}

    def param_options(self, name: str) -> set[str]:
        """Every parameter option any registration of ``name`` accepts."""
        options: set[str] = set()
        for entry in self._by_name.get(name, ()):
            if entry.kind == "pass":
                options.update(entry.params)
        return options

    @classmethod
    def parse(cls, text: str) -> PassRegistry:
        """Reads the output of ``opt --print-passes``."""
        entries = []
        level = kind = None
        with_params = False
        for raw in text.splitlines():
            if not raw.strip():
                continue
            header = _SECTION_RE.match(raw.strip())
            if header and not raw.startswith(" "):
                level = _LEVEL_OF_SECTION[header.group(1)]
                section = header.group(2)
                with_params = section == "passes with params"
                kind = {"analyses": "analysis", "alias analyses": "alias-analysis"}.get(section, "pass")
                continue
            if level is None or kind is None:
                continue
            entries.append(_parse_entry(raw.strip(), level, kind, with_params))
        return cls(entries)


def _parse_entry(spelling: str, level: str, kind: str, with_params: bool) -> RegisteredPass:
    if "<" not in spelling:
        return RegisteredPass(spelling, level, kind)
    name, _, rest = spelling.partition("<")
    inner = rest[: rest.index(">")] if ">" in rest else rest
    if with_params and rest.endswith(">") and rest.count("<") == 0:
        return RegisteredPass(name, level, kind, tuple(inner.split(";")))
    # ``print<domtree>`` and friends: the bracket is part of the name's spelling.
    return RegisteredPass(name, level, kind, (rest[:-1] if rest.endswith(">") else rest,), True)


@functools.lru_cache(maxsize=8)
def load_registry(toolchain: Toolchain) -> PassRegistry:
    """Runs ``opt --print-passes`` of ``toolchain`` and parses it (cached per process)."""
    result = run_command([toolchain.tool("opt"), "--print-passes"], timeout=60)
    return PassRegistry.parse(result.stdout_text)
