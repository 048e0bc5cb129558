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
3. **Validation of the lists.** Each kept ``F`` is checked by the selection layer
   (:meth:`~llm_compiler.selection.select.Selector.check`) as the whole-unit list
   ``B,F``: two compiles giving the same size and IR, then the run's gate (target
   link, PassListEval, the program's own run, the user's check). Every function of
   the joined unit is then code a validated list made from the same IR. A rejected
   list's functions keep ``B``'s code. ``B,F`` need not beat -Oz: only the join must.
4. **Join** (:func:`join_functions`). The functions are cut out of their lists'
   modules with ``llvm-extract`` and linked with ``llvm-link`` to the rest of ``B``'s
   module. Extraction makes local symbols external (hidden), so the joined module is
   given back its original linkage by LLVM's ``internalize`` with the unit's
   originally public names: the split costs nothing.
5. **Validation of the join.** The joined unit must be smaller than ``B``'s and than
   -Oz's (measured by the selection layer), then pass
   :meth:`~llm_compiler.selection.select.Selector.check_object`: a replay of the
   record from the unoptimized unit builds the same object bytes (determinism), and
   the gate's object checks pass (no symbol the target cannot resolve, the program's
   own run and the user's check where they apply). Otherwise ``B`` stands, and the
   outcome's :class:`~llm_compiler.selection.outcomes.Verdict` says what stopped the join.

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
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import Objective
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.searchable import PassSet
from llm_compiler.selection import Candidate, Selector, Verdict, fallback_reason
from llm_compiler.toolchain.elf import berkeley_size, function_sizes
from llm_compiler.toolchain.ir import DEFINE_RE
from llm_compiler.toolchain.runner import run_command

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
        rejected: ``(list, reason)`` of function-level lists the selection layer
            rejected, the reason starting with its verdict.
        verdict: For a kept record, ``validated`` (or ``not-checked`` with validation
            turned off); else what stopped the join (``not-smaller-than-oz``,
            ``validation-failure``, ``nondeterministic``, ``compile-failure``), or
            ``not-checked`` when the phase did not reach a verdict.
        oz_size: -Oz's bytes as the selection layer measured them (None when the phase
            stopped before it needed them, and in records written before they were).

    Raises:
        ValueError: A kept record with a failing verdict, or not smaller than the base
            list's result or -Oz's.
    """

    record: FunctionLists | None
    size: int
    base_size: int
    compiles: int
    detail: str
    rejected: tuple[tuple[str, str], ...] = ()
    verdict: Verdict = Verdict.NOT_CHECKED
    oz_size: int | None = None

    def __post_init__(self) -> None:
        if self.record is None:
            return
        if self.verdict.is_failure:
            raise ValueError(f"a kept per-function record needs a passing verdict, not {self.verdict}")
        if self.size >= self.base_size or (self.oz_size is not None and self.size >= self.oz_size):
            raise ValueError(
                f"a kept per-function record must be smaller than its base list's {self.base_size} B "
                f"and -Oz's {self.oz_size} B, not {self.size} B"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record.to_json() if self.record is not None else None,
            "size": self.size,
            "base_size": self.base_size,
            "compiles": self.compiles,
            "detail": self.detail,
            "rejected": [list(pair) for pair in self.rejected],
            "verdict": self.verdict.value,
            "oz_size": self.oz_size,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FunctionListsOutcome:
        """Reads :meth:`to_json`'s form; a record written before verdicts were gets the
        one its detail states (``not-checked`` for "unchecked: ...", else ``validated``)."""
        record = data.get("record")
        detail = str(data["detail"])
        if "verdict" in data:
            verdict = Verdict.parse(str(data["verdict"]))
        elif record and not detail.startswith("unchecked"):
            verdict = Verdict.VALIDATED
        else:
            verdict = Verdict.NOT_CHECKED
        oz_size = data.get("oz_size")
        return cls(
            FunctionLists.from_json(record) if record else None,
            int(data["size"]),
            int(data["base_size"]),
            int(data["compiles"]),
            detail,
            tuple((str(a), str(b)) for a, b in data.get("rejected", [])),
            verdict,
            int(oz_size) if oz_size is not None else None,
        )


def check_list(selector: Selector, program: Program, pipeline: str) -> Candidate:
    """The selection layer's checks of one whole-unit list that need not beat -Oz (a
    base list and a function-level list after it): measured, compiled again for the
    determinism check, then the gate
    (:meth:`~llm_compiler.selection.select.Selector.check`).

    Returns:
        The list as a candidate with its size and verdict (``compile-failure`` when it
        does not build).
    """
    passes = selector.compiler.passes(pipeline)
    size, digest, error = selector.measure(program)(passes)
    if size is None:
        return Candidate(pipeline=pipeline, run=pipeline, verdict=Verdict.COMPILE_FAILURE, detail=error)
    verdict, detail, replay, result = selector.check(program, passes, size, digest)
    return Candidate(
        pipeline=pipeline,
        run=pipeline,
        binary_size=size,
        verdict=verdict,
        detail=detail,
        replay=replay,
        output_hash=digest,
        transient=result is not None and result.transient,
    )


def tune_function_lists(
    compiler: Compiler,
    program: Program,
    base: str,
    candidates: Sequence[PassList],
    selector: Selector,
    *,
    max_lists: int = DEFAULT_MAX_LISTS,
) -> FunctionListsOutcome:
    """Steps 1 to 5 of the module docstring for one unit.

    Args:
        compiler: The compiler (the search's and the join's compiles).
        program: The unit (unoptimized).
        base: Its validated best list.
        candidates: Function-level lists to try.
        selector: The run's selection layer, on the same toolchain: checks each list
            and the joined unit and measures -Oz. With its validation turned off the
            lists go unchecked and the join is only built twice (``not-checked``).
        max_lists: Distinct function-level lists the join may use.

    Raises:
        ValueError: The selector's objective is not binary-size (the symbol table
            measures functions in bytes of text + data).
    """
    if selector.policy.objective is not Objective.BINARY_SIZE:
        raise ValueError(
            f"per-function lists measure binary-size, not {selector.policy.objective}; "
            "give them a Selector whose policy's objective is binary-size"
        )
    base_ir = compiler.optimize(program, compiler.passes(base))
    optimized = compiler.load_ir(base_ir, f"{program.name} after its list")
    search = search_function_lists(compiler, optimized, candidates, max_lists=max_lists)
    compiles = search.compiles
    rejected: list[tuple[str, str]] = []

    def standing(verdict: Verdict, detail: str, oz_size: int | None = None) -> FunctionListsOutcome:
        return FunctionListsOutcome(
            None, search.base_size, search.base_size, compiles, detail, tuple(rejected), verdict, oz_size
        )

    if not search.chosen:
        return standing(Verdict.NOT_SMALLER, "no function-level list made a function smaller")
    chosen, turned_down = dict(search.chosen), []
    if selector.policy.validate:
        for pipeline in sorted(set(chosen.values())):
            checked = check_list(selector, program, combined_list(base, pipeline))
            compiles += 2  # its measurement and the determinism check's second compile
            if checked.verdict is not Verdict.VALIDATED:
                turned_down.append(checked)
                rejected.append((pipeline, f"{checked.verdict}: {checked.detail[:300]}"))
                chosen = {f: p for f, p in chosen.items() if p != pipeline}
    if not chosen:
        return standing(fallback_reason(turned_down)[0], "every function-level list was rejected")
    record = FunctionLists(base, tuple(sorted(chosen.items())))
    lists = len(record.lists)
    label = f"{lists} per-function list{'s' * (lists != 1)} after {base}"
    try:
        # Built from the base list's module made above; the determinism check replays
        # the record from the unoptimized unit, as a user would.
        obj = compiler.lower(_join_after(compiler, optimized, record, program.name), name=program.name)
        compiles += 1
    except CommandFailed as error:
        return standing(Verdict.COMPILE_FAILURE, f"the join failed: {str(error)[:300]}")
    size = berkeley_size(obj).binary_size
    if size >= search.base_size:
        why = f"the joined unit ({size} B) is not smaller than under its list ({search.base_size} B)"
        return standing(Verdict.NOT_SMALLER, why)
    oz_size = selector.oz_size(program)
    if size >= oz_size:
        return standing(
            Verdict.NOT_SMALLER, f"the joined unit ({size} B) is not smaller than -Oz ({oz_size} B)", oz_size
        )

    def replay() -> bytes:
        return compiler.lower(build_function_lists(compiler, program, record), name=program.name)

    check = selector.check_object(program, lambda: obj, label, again=replay)
    compiles += 1
    if check.verdict.is_failure:
        return standing(
            check.verdict, f"the joined unit failed ({check.verdict}): {check.detail[:300]}", oz_size
        )
    verdict, detail = check.verdict, check.detail
    if verdict is Verdict.VALIDATED and selector.policy.validate:
        passed = f"each of {lists} function-level list{'s' * (lists != 1)} passed the gate"
        detail = f"{passed}; the joined unit ({size} B, -Oz {oz_size} B) {check.detail}"
    elif verdict is Verdict.VALIDATED:  # a gate, but the lists went unchecked
        verdict, detail = Verdict.NOT_CHECKED, f"unchecked: validation was turned off for the lists; {detail}"
    return FunctionListsOutcome(
        record, size, search.base_size, compiles, detail, tuple(rejected), verdict, oz_size
    )
