"""Per-function lists: after a unit's best list, a function-level list for each function.

A unit's best list is one compromise for all its functions. After it, each function
may still shrink under a further function-level list that would grow another
function. This module finds such lists and joins their results into one unit:

1. **Candidates.** The unit optimized by its (validated) best list ``B`` is compiled
   once more with each of ``count`` function-level lists ``F`` (1..8 function or
   loop members of the pass set, drawn with a seed). Function passes change only
   the function they run on, so one compile measures ``F`` on every function at
   once: the object's symbol table gives each function's bytes. Bytes a list adds
   outside function symbols (constant pools of vector code, tables) are charged in
   full to every function the list shrinks.
2. **Choice.** Each function takes the list that made it smallest, if smaller than
   under ``B``; at most ``max_lists`` distinct lists are kept, those that save most.
3. **Validation of the lists.** Each kept ``F`` is checked by the run's gate as the
   whole-unit list ``B,F`` (target link, PassListEval, the program's own run, the
   user's check): every function of the joined unit is then code a validated list
   made from the same IR. A rejected list's functions keep ``B``'s code.
4. **Join** (:func:`join_functions`). The functions are cut out of their lists'
   modules with ``llvm-extract`` and linked with ``llvm-link`` to the rest of ``B``'s
   module. Extraction makes local symbols external (hidden), so the joined module is
   given back its original linkage by LLVM's ``internalize`` with the unit's
   originally public names: the split costs nothing.
5. **Validation of the join.** The joined unit must be smaller than ``B``'s, build
   to the same bytes twice (determinism), reference no symbol the target cannot
   resolve, and pass the program's own run and the user's check where they apply.
   Otherwise ``B`` stands.

The outcome is a replayable :class:`FunctionLists` record (``B`` and each function's
list) that :func:`build_function_lists` turns back into the unit's IR. Functions with
linkonce, weak, available_externally or comdat linkage are left alone (their bodies
may be replaced at link time). Only byte objectives use this: the symbol table
measures bytes.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.searchable import PassSet
from llm_compiler.toolchain.elf import berkeley_size, function_sizes
from llm_compiler.toolchain.ir import DEFINE_RE
from llm_compiler.toolchain.runner import run_command

if TYPE_CHECKING:
    from llm_compiler.validation.gate import Gate

#: Longest function-level list drawn.
MAX_FUNCTION_LIST_LENGTH = 8
#: Distinct function-level lists a joined unit may use (each is validated).
DEFAULT_MAX_LISTS = 4
#: Linkage words whose definitions may be replaced at link time: left alone.
_REPLACEABLE = ("linkonce", "linkonce_odr", "weak", "weak_odr", "available_externally", "common")
_LOCAL = ("internal", "private")


@dataclass(frozen=True)
class FunctionLists:
    """A unit's best list and, for some of its functions, a function-level list after it.

    Attributes:
        base: The unit's list (the exact ``opt -passes=`` text).
        functions: ``(function, function-level list)`` pairs, sorted by function.
    """

    base: str
    functions: tuple[tuple[str, str], ...] = ()

    @property
    def lists(self) -> dict[str, list[str]]:
        """Each distinct function-level list and the functions it is used for."""
        grouped: dict[str, list[str]] = {}
        for function, pipeline in self.functions:
            grouped.setdefault(pipeline, []).append(function)
        return grouped

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base, "functions": dict(self.functions)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FunctionLists:
        """Reads :meth:`to_json`'s form.

        Raises:
            InvalidInput: It is not that form.
        """
        if not isinstance(data.get("base"), str) or not isinstance(data.get("functions"), dict):
            raise InvalidInput("A per-function record needs 'base' (a pipeline) and 'functions' (an object).")
        return cls(data["base"], tuple(sorted((str(f), str(p)) for f, p in data["functions"].items())))


def tunable_functions(ir: str) -> list[str]:
    """The functions of ``ir`` whose bodies may be replaced: defined, not replaceable at
    link time, not in a comdat."""
    names = []
    for line in ir.splitlines():
        match = DEFINE_RE.match(line)
        if match is None:
            continue
        head = line[: match.start(1)].split()
        if any(word in _REPLACEABLE for word in head) or " comdat" in line:
            continue
        names.append(match.group(1).strip('"'))
    return names


def public_names(ir: str) -> list[str]:
    """Names of the definitions of ``ir`` other units can see (not internal or private)."""
    names = []
    for line in ir.splitlines():
        match = DEFINE_RE.match(line)
        if match is not None:
            name, head = match.group(1), line[: match.start(1)].split()
        elif line.startswith("@") and " = " in line:
            name, rest = line[1:].split(" = ", 1)
            head = rest.split()
            if head and head[0] in ("external", "extern_weak"):
                continue
        else:
            continue
        if not any(word in _LOCAL for word in head):
            names.append(name.strip('"'))
    return names


def _global_names(ir: str) -> set[str]:
    return {
        line[1:].split(" = ", 1)[0].strip('"')
        for line in ir.splitlines()
        if line.startswith("@") and " = " in line
    }


def join_functions(
    compiler: Compiler, base_ir: str, parts: Mapping[str, tuple[str, Sequence[str]]], *, name: str = "<ir>"
) -> str:
    """``base_ir`` with the bodies of some functions taken from other modules.

    Args:
        compiler: Its toolchain's ``llvm-extract``, ``llvm-link`` and ``opt`` do the work.
        base_ir: The module the others were optimized from.
        parts: For each part's key, the module (optimized from ``base_ir`` by
            function passes only) and the functions to take from it.
        name: The unit, named in errors.

    Returns:
        The joined module's text, with ``base_ir``'s linkage restored.

    Raises:
        CommandFailed: A tool failed (a name clash between parts, for example).
    """
    tools = compiler.toolchain
    chosen = [function for _, functions in parts.values() for function in functions]
    base_globals = _global_names(base_ir)
    with tempfile.TemporaryDirectory(prefix="llm-compiler-join-") as scratch:
        folder = Path(scratch)
        (folder / "base.ll").write_text(base_ir)
        files = [folder / "rest.ll"]
        delete = [f"--func={function}" for function in chosen]
        extract: list[str | Path] = [tools.tool("llvm-extract"), "-S"]
        run_command(
            [*extract, "--delete", *delete, folder / "base.ll", "-o", files[0]],
            timeout=compiler.timeout,
            subject=name,
        )
        for index, (module, functions) in enumerate(parts.values()):
            source = folder / f"module{index}.ll"
            source.write_text(module)
            # Globals a function pass made (switch tables...) go with their functions.
            made = sorted(_global_names(module) - base_globals)
            files.append(folder / f"part{index}.ll")
            run_command(
                [
                    *extract,
                    *[f"--func={function}" for function in functions],
                    *[f"--glob={glob}" for glob in made],
                    source,
                    "-o",
                    files[-1],
                ],
                timeout=compiler.timeout,
                subject=name,
            )
        linked = run_command(
            [tools.tool("llvm-link"), "-S", *files], timeout=compiler.timeout, subject=name
        ).stdout_text
        public = ",".join(public_names(base_ir))
        return run_command(
            [tools.tool("opt"), "-S", "-passes=internalize", f"-internalize-public-api-list={public}", "-"],
            input=linked.encode(),
            timeout=compiler.timeout,
            subject=name,
        ).stdout_text


def build_function_lists(compiler: Compiler, program: Program, record: FunctionLists) -> str:
    """Replays a record: ``program``'s IR after its base list and its functions' lists.

    Raises:
        InvalidPassList: A list of the record fails the pass-list gate.
        CommandFailed: LLVM failed.
    """
    base_ir = compiler.optimize(program, compiler.passes(record.base))
    if not record.functions:
        return base_ir
    optimized = compiler.load_ir(base_ir, f"{program.name} after its list")
    return _join_after(compiler, optimized, record, program.name)


def _join_after(compiler: Compiler, optimized: Program, record: FunctionLists, name: str) -> str:
    """The join of ``record``'s function lists, each run on ``optimized`` (the unit after
    ``record.base``)."""
    parts = {
        pipeline: (compiler.optimize(optimized, compiler.passes(pipeline)), functions)
        for pipeline, functions in record.lists.items()
    }
    return join_functions(compiler, optimized.ir, parts, name=name)


def function_level_members(pass_set: PassSet) -> list[PassList]:
    """The pass set's members that work on one function at a time (function and loop
    passes), each a one-element list."""
    return [
        member
        for text, member in zip(pass_set.members, pass_set.member_lists, strict=True)
        if pass_set.level_of(text) in ("function", "loop")
    ]


def draw_function_lists(members: Sequence[PassList], count: int, seed: str) -> list[PassList]:
    """``count`` distinct lists of 1..8 of ``members``, the same for the same seed."""
    rng = random.Random(hashlib.sha256(seed.encode()).hexdigest())
    drawn: dict[str, PassList] = {}
    for _ in range(count * 4):
        if len(drawn) == count or not members:
            break
        length = rng.randint(1, MAX_FUNCTION_LIST_LENGTH)
        candidate = PassList.concat(rng.choice(members) for _ in range(length))
        drawn.setdefault(candidate.pipeline, candidate)
    return list(drawn.values())


@dataclass
class FunctionSearch:
    """What the per-function search of one unit measured and chose.

    Attributes:
        base_size: Bytes of the unit under its base list.
        compiles: Compiles made (each candidate once, the joins).
        chosen: Function-level list by function, before validation.
        saving: Bytes the chosen lists save, summed over functions (before the join).
    """

    base_size: int
    compiles: int = 0
    chosen: dict[str, str] = field(default_factory=dict)
    saving: int = 0


def search_function_lists(
    compiler: Compiler,
    optimized: Program,
    candidates: Sequence[PassList],
    *,
    max_lists: int = DEFAULT_MAX_LISTS,
) -> FunctionSearch:
    """Measures each candidate on ``optimized`` (the unit after its base list) and
    chooses each function's list (module docstring, steps 1 and 2)."""
    base_obj, _ = compiler.object_code(optimized, None)
    base = function_sizes(base_obj)
    tunable = set(tunable_functions(optimized.ir)) & set(base)
    search = FunctionSearch(base_size=berkeley_size(base_obj).binary_size, compiles=1)
    base_other = search.base_size - sum(base.values())
    best: dict[str, tuple[int, str]] = {}
    for candidate in candidates:
        search.compiles += 1
        try:
            obj, _ = compiler.object_code(optimized, candidate)
        except CommandFailed:
            continue
        sizes = function_sizes(obj)
        # Bytes outside function symbols (constant pools, tables) that the list added
        # cannot be told apart by function: each function it shrinks is charged them all.
        other = berkeley_size(obj).binary_size - sum(sizes.values())
        charge = max(0, other - base_other)
        for function, size in sizes.items():
            if function in tunable and size + charge < best.get(function, (base[function], ""))[0]:
                best[function] = (size + charge, candidate.pipeline)
    savings: dict[str, int] = {}
    for function, (size, pipeline) in best.items():
        savings[pipeline] = savings.get(pipeline, 0) + base[function] - size
    kept = sorted(savings, key=lambda p: (-savings[p], p))[:max_lists]
    search.chosen = {f: p for f, (_, p) in sorted(best.items()) if p in kept}
    search.saving = sum(savings[p] for p in kept)
    return search


def combined_list(base: str, function_list: str) -> str:
    """The whole-unit list that runs ``function_list`` after ``base``."""
    return str(parse_pipeline(base) + parse_pipeline(function_list))


@dataclass(frozen=True)
class FunctionListsOutcome:
    """The per-function phase's result for one unit.

    Attributes:
        record: The kept record (None: the base list stands).
        size: Bytes of the unit as kept (the base list's when ``record`` is None).
        base_size: Bytes under the base list.
        compiles: Compiles made.
        detail: What was checked, or why the base list stands.
        rejected: ``(list, reason)`` of function-level lists the gate rejected.
    """

    record: FunctionLists | None
    size: int
    base_size: int
    compiles: int
    detail: str
    rejected: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record.to_json() if self.record is not None else None,
            "size": self.size,
            "base_size": self.base_size,
            "compiles": self.compiles,
            "detail": self.detail,
            "rejected": [list(pair) for pair in self.rejected],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FunctionListsOutcome:
        record = data.get("record")
        return cls(
            FunctionLists.from_json(record) if record else None,
            int(data["size"]),
            int(data["base_size"]),
            int(data["compiles"]),
            str(data["detail"]),
            tuple((str(a), str(b)) for a, b in data.get("rejected", [])),
        )


def tune_function_lists(
    compiler: Compiler,
    program: Program,
    base: str,
    candidates: Sequence[PassList],
    gate: Gate | None,
    *,
    max_lists: int = DEFAULT_MAX_LISTS,
) -> FunctionListsOutcome:
    """Steps 1 to 5 of the module docstring for one unit.

    Args:
        compiler: The compiler.
        program: The unit (unoptimized).
        base: Its validated best list.
        candidates: Function-level lists to try.
        gate: Checks the lists and the join (None: unchecked, validation turned off).
        max_lists: Distinct function-level lists the join may use.
    """
    base_ir = compiler.optimize(program, compiler.passes(base))
    optimized = compiler.load_ir(base_ir, f"{program.name} after its list")
    search = search_function_lists(compiler, optimized, candidates, max_lists=max_lists)
    compiles = search.compiles

    def standing(detail: str, rejected: Sequence[tuple[str, str]] = ()) -> FunctionListsOutcome:
        return FunctionListsOutcome(
            None, search.base_size, search.base_size, compiles, detail, tuple(rejected)
        )

    if not search.chosen:
        return standing("no function-level list made a function smaller")
    chosen, rejected = dict(search.chosen), []
    if gate is not None:
        for pipeline in sorted(set(chosen.values())):
            verdict = gate.check(program, compiler.passes(combined_list(base, pipeline)))
            if not verdict.passed:
                rejected.append((pipeline, verdict.description[:300]))
                chosen = {f: p for f, p in chosen.items() if p != pipeline}
    if not chosen:
        return standing("every function-level list was rejected", rejected)
    record = FunctionLists(base, tuple(sorted(chosen.items())))
    try:
        # The first build starts from the base list's module made above; the second
        # replays the record from the unoptimized unit, as a user would.
        joined = _join_after(compiler, optimized, record, program.name)
        again = build_function_lists(compiler, program, record)
        obj = compiler.lower(joined, name=program.name)
        compiles += 2
    except CommandFailed as error:
        return standing(f"the join failed: {str(error)[:300]}", rejected)
    if joined != again:
        return standing("the join is not deterministic (two builds differ)", rejected)
    size = berkeley_size(obj).binary_size
    if size >= search.base_size:
        return standing(
            f"the joined unit ({size} B) is not smaller than under its list ({search.base_size} B)", rejected
        )
    detail = "unchecked: validation was turned off"
    if gate is not None:
        verdict = gate.check_object(program, obj, f"{len(record.lists)} per-function lists after {base}")
        if not verdict.passed:
            return standing(f"the joined unit failed: {verdict.description[:300]}", rejected)
        lists = len(record.lists)
        checked = f"each of {lists} function-level list{'s' * (lists != 1)} passed the gate"
        detail = f"{checked}; the joined unit {verdict.description}"
    return FunctionListsOutcome(record, size, search.base_size, compiles, detail, tuple(rejected))
