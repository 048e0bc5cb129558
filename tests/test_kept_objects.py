"""Every place that writes an object, installs a link or writes bytes that leave the tool.

Issue 44, item 1: every object, joined unit and linked program the tool writes is the
result of a ``selection/`` decision with a closed ``Verdict``. This test keeps the list
of the places that could break that promise: an AST scan of ``src/llm_compiler`` finds
every call that writes a file's bytes,

* the tool's own writers: ``write_object``, ``atomic_write_bytes``, ``_install`` and
  ``compile_to`` (each call of one is a place of its own);
* ``os.replace``, ``shutil.copy*``, ``<path>.write_bytes``, and ``open`` (built-in,
  ``os.fdopen``, ``<path>.open``) in a binary write mode (``wb``, ``ab``, ``a+b``...),

and names the place by module and function (``Class.method``, ``outer.inner``). Each
place is in :data:`DECIDED`, with one line saying which decision precedes what it
writes (``Selector.select``, ``Selector.check``, ``Selector.check_object``, or for a
whole-program link ``LinkJudge.confirm``), that it writes no object (``not an object:
...``: caches, logs, reports, the tool's own files), or that it is one of the writers
above (``primitive: ...``, whose callers are places of their own); or it is in
:data:`NOT_YET_DECIDED`, with why it writes an object no selection decision precedes.
A new place fails :func:`test_every_writer_is_listed` with its file and line and what
to do.

What the scan cannot see: files a subprocess writes itself (clang's ``-o`` on the
driver's fallback and pass-through lines, ``llvm-objcopy`` adding the IR section to a
kept object in place, lld's outputs before ``_install``), and text writers
(``atomic_write_text``, ``Path.write_text``, ``RunDir.append``'s callers), whose
records carry their own verdict.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import llm_compiler

PACKAGE = Path(llm_compiler.__file__).parent

#: The tool's own writers: a call of one is a place (its definition is a ``primitive``).
WRITERS = frozenset({"write_object", "atomic_write_bytes", "_install", "compile_to"})
#: Primitives the scan does not follow by name: their callers write text (records,
#: tables), whose lines carry their own verdict.
PRIMITIVES_CALLED_OTHERWISE = frozenset(
    {
        ("llm_compiler.files", "atomic_write_text"),
        ("llm_compiler.files", "_write_table"),
        ("llm_compiler.files", "RunDir.append"),
    }
)
#: What a place's line in :data:`DECIDED` starts with.
KINDS = (
    "Selector.select",
    "Selector.check",
    "Selector.check_object",
    "LinkJudge.confirm",
    "not an object: ",
    "primitive: ",
)

#: (module, function) -> the decision that precedes what it writes.
DECIDED: dict[tuple[str, str], str] = {
    # Objects and lists that leave the tool.
    ("llm_compiler.driver.cc", "Driver._compile_unit_with"): (
        "Selector.select: the chooser's list (Predicted: ListOptimizer.decide, and confirm as a "
        "one-candidate selection; tune records: their own Selector.select verdict, validated only), "
        "kept by lowering.keep_smallest only when its object is smaller than -Oz's and clang -Oz's, "
        "else -Oz; "
        "an object with frame pointers (driver/frames.py) replaces it only after Selector.check_object"
    ),
    ("llm_compiler.driver.cc", "Driver._from_cache"): (
        "Selector.select, earlier: the cache holds only objects Driver._compile_unit_with kept "
        "(CACHEABLE, not transient), stored before they were written"
    ),
    ("llm_compiler.driver.direct", "_write"): (
        "Selector.select, earlier: a direct hit replays an object Driver._compile_unit_with kept and "
        "cached, once every input and tool is confirmed unchanged; also the build's dependency file"
    ),
    ("llm_compiler.driver.whole_program", "link"): (
        "LinkJudge.confirm (selection/links.py): an LTO link replaces the native one (the build's "
        "link of decided objects) only when made twice the same, its list validated on the joined "
        "module (chooser's Selector.select, else Selector.check) and, for a program, run as native; "
        "a relink of unchanged inputs installs what such a decision kept (never a transient one)"
    ),
    ("llm_compiler.cli.optimize", "_write"): (
        "Selector.select: the kept result is UnitResult.chosen of ListOptimizer.decide (-Oz unless a "
        "list validated); its object comes from the compiler's cache of the checked compile"
    ),
    ("llm_compiler.autotune.export", "export_run"): (
        "Selector.select (autotune.jobs.validate_job) chose best_pipeline, verdict not-checked under "
        "--no-validate; a per-function join passed Selector.check per list and Selector.check_object"
    ),
    ("llm_compiler.files", "_write_table"): (
        "primitive: Parquet copies of JSONL records (tune's best.parquet carries each record's "
        "Selector.select verdict and validated)"
    ),
    ("llm_compiler.files", "RunDir.append"): (
        "primitive: one record of a run (optimize, evaluate: their rows carry the Selector.select "
        "verdict); the callers append records, not objects"
    ),
    ("llm_compiler.files", "atomic_write_bytes"): "primitive: writes a file whole; its callers are places",
    ("llm_compiler.files", "atomic_write_text"): (
        "primitive: text through atomic_write_bytes; its callers write text, not objects"
    ),
    ("llm_compiler.driver.records", "write_object"): (
        "primitive: the driver's object writer; its callers are places"
    ),
    ("llm_compiler.driver.whole_program", "_install"): (
        "primitive: installs a linked file; its callers are places"
    ),
    ("llm_compiler.core.compiler", "Compiler.compile_to"): (
        "primitive: a program after a given list as .ll/.bc/.o/.s; its callers are places"
    ),
    # Scratch of the checks themselves: the objects a decision is made on, never kept.
    ("llm_compiler.validation.checker", "Checker.link_and_run"): (
        "not an object: the candidate's object and executable in the check's scratch folder"
    ),
    ("llm_compiler.selection.links", "run_program"): (
        "not an object: a linked candidate copied to the scratch path its run check runs it from"
    ),
    ("llm_compiler.validation.gate", "Gate._run_user_check"): (
        "not an object: the candidate's object in a scratch folder for the user's --check command"
    ),
    ("llm_compiler.toolchain.gcc", "GccSource.compile"): (
        "not an object: a corpus unit's GCC source unpacked to a scratch folder for gcc -Os, the reference"
    ),
    # Reports, caches, logs, the tool's own files.
    ("llm_compiler.corpus.store", "CorpusStore.add"): (
        "not an object: a corpus unit's GCC-preprocessed source (gzip), what gcc-os compiles"
    ),
    ("llm_compiler.toolchain.zygote", "start"): "not an object: the zygote's log of requests",
    ("llm_compiler.validation.reduce", "write_reproducer"): (
        "not an object: a miscompile reproducer's expected output (a report)"
    ),
    ("llm_compiler.validation.csmith", "_generate"): "not an object: a generated C test program",
    ("llm_compiler.predictor.table", "_write_shard"): (
        "not an object: a shard of the predictor's size table (training data: sizes per list)"
    ),
    ("llm_compiler.toolchain.llvm_c", "build_shim"): (
        "not an object: the tool's own in-process llc helper library, built once per LLVM"
    ),
    ("llm_compiler.toolchain.runner", "start_process"): "not an object: a subprocess's stderr, captured",
    ("llm_compiler.driver.server", "_start"): "not an object: the compile server's log",
    ("llm_compiler.training.tokenizer", "npm_tarball.fetch"): (
        "not an object: a downloaded or copied tokenizer package"
    ),
    ("llm_compiler.training.tokenizer", "build_once"): "not an object: the built tokenizer",
    ("llm_compiler.cli.compile", "run"): (
        "Selector.check (cli.compile._check): an object or assembly of a list other than default<Oz> "
        "is written once the list is validated on the program, or under --unchecked, which it says; "
        "IR and bitcode are written as asked"
    ),
}

#: (module, function) -> why the object it writes has no selection decision before it.
NOT_YET_DECIDED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Writer:
    """A call that writes bytes: where it is and what it calls."""

    module: str
    function: str
    path: Path
    line: int
    call: str

    @property
    def place(self) -> tuple[str, str]:
        return self.module, self.function


def _binary_write_mode(call: ast.Call, position: int) -> str | None:
    """The mode of an ``open``-like call when it is a constant binary write mode."""
    mode = next((kw.value for kw in call.keywords if kw.arg == "mode"), None)
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    text = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else ""
    return text if "b" in text and set(text) & set("wax+") else None


def written_by(call: ast.Call) -> str | None:
    """What ``call`` writes with (``"os.replace"``, ``"open('wb')"``...), or None."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in WRITERS:
            return func.id
        if func.id == "open" and (mode := _binary_write_mode(call, 1)):
            return f"open({mode!r})"
        return None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if func.attr in WRITERS:
        return func.attr
    if (owner, func.attr) == ("os", "replace") or (owner == "shutil" and func.attr.startswith("copy")):
        return f"{owner}.{func.attr}"
    if func.attr == "write_bytes":
        return ".write_bytes"
    if func.attr in ("open", "fdopen"):
        # os.open takes flags, not a mode; io.open and os.fdopen take the path or fd first.
        if owner == "os" and func.attr == "open":
            return None
        position = 1 if owner in ("os", "io") else 0
        if mode := _binary_write_mode(call, position):
            return f"{owner or '<path>'}.{func.attr}({mode!r})"
    return None


class _Scan(ast.NodeVisitor):
    def __init__(self, module: str, path: Path) -> None:
        self.module, self.path = module, path
        self.scope: list[str] = []
        self.found: list[Writer] = []

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Call(self, node: ast.Call) -> None:
        call = written_by(node)
        if call is not None:
            function = ".".join(self.scope) or "<module>"
            self.found.append(Writer(self.module, function, self.path, node.lineno, call))
        self.generic_visit(node)


def writers(package: Path) -> Iterator[Writer]:
    """Every call in ``package`` (a folder named as its top-level module) that writes bytes."""
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        scan = _Scan(module.removesuffix(".__init__"), path)
        scan.visit(ast.parse(path.read_text(), str(path)))
        yield from scan.found


def problems(
    found: list[Writer], decided: Mapping[tuple[str, str], str], undecided: Mapping[tuple[str, str], str]
) -> list[str]:
    """What is wrong between the places found and the tables: each unlisted writer with
    its file and line and what to do, and each table entry no writer is left at."""
    listed = {**decided, **undecided}
    messages = [
        f"{writer.path}:{writer.line}: {writer.function}() in {writer.module} writes with "
        f"{writer.call} and is not in tests/test_kept_objects.py. If it writes an object, a "
        "joined unit, a linked file or pass lists that leave the tool, make it the result of a "
        "selection/ decision (Selector.select, Selector.check, Selector.check_object) and add it to "
        "DECIDED naming that decision; if it writes no object, add it to DECIDED as "
        "'not an object: what it writes'; if no decision precedes it yet, add it to NOT_YET_DECIDED "
        "with the reason."
        for writer in found
        if writer.place not in listed
    ]
    places = {writer.place for writer in found}
    messages += [
        f"{module}.{function} is listed in tests/test_kept_objects.py but writes nothing any more: "
        "remove its entry."
        for module, function in listed
        if (module, function) not in places
    ]
    return messages


def test_every_writer_is_listed() -> None:
    found = list(writers(PACKAGE))
    assert len(found) >= len(DECIDED) + len(NOT_YET_DECIDED)
    messages = problems(found, DECIDED, NOT_YET_DECIDED)
    assert not messages, "\n".join(messages)


def test_each_entry_says_what_precedes_it() -> None:
    assert not set(DECIDED) & set(NOT_YET_DECIDED)
    for place, decision in DECIDED.items():
        assert decision.startswith(KINDS) and len(decision) < 400, (place, decision)
        # A primitive is one of the writers whose every call is a place of its own.
        assert decision.startswith("primitive: ") == (
            place[1].rpartition(".")[2] in WRITERS or place in PRIMITIVES_CALLED_OTHERWISE
        ), place
    assert all(reason.strip() for reason in NOT_YET_DECIDED.values())


PLANTED = """\
import os
import shutil
from pathlib import Path


def sneaky(obj: bytes, out: Path) -> None:
    out.write_bytes(obj)


class Linker:
    def install(self, linked: Path, out: Path) -> None:
        def inner() -> None:
            shutil.copyfile(linked, out)
        inner()
        with open(out, mode="ab") as stream:
            stream.write(b"")
        with os.fdopen(3, "wb") as stream:
            stream.write(b"")


def reads(path: Path) -> bytes:
    with open(path, "rb") as stream, path.open() as text, open(path) as again:
        return stream.read() + text.read().encode() + again.read().encode() + path.read_bytes()


def listed(out: Path) -> None:
    os.replace(out, out)
"""


def test_a_planted_writer_is_found(tmp_path: Path) -> None:
    """The scan sees a writer added to a tree, wherever it hides, and names its line."""
    package = tmp_path / "llm_compiler"
    (package / "driver").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    planted = package / "driver" / "planted.py"
    planted.write_text(PLANTED)
    found = list(writers(package))
    assert [(w.function, w.line, w.call) for w in found] == [
        ("sneaky", 7, ".write_bytes"),
        ("Linker.install.inner", 13, "shutil.copyfile"),
        ("Linker.install", 15, "open('ab')"),
        ("Linker.install", 17, "os.fdopen('wb')"),
        ("listed", 27, "os.replace"),
    ]
    assert {w.module for w in found} == {"llm_compiler.driver.planted"}
    decided = {("llm_compiler.driver.planted", "listed"): "not an object: a test"}
    stale = {("llm_compiler.driver.gone", "f"): "Selector.select"}
    messages = problems(found, decided, stale)
    assert len(messages) == 5
    assert messages[0].startswith(
        f"{planted}:7: sneaky() in llm_compiler.driver.planted writes with .write_bytes"
    )
    assert "NOT_YET_DECIDED" in messages[0] and "Selector.check_object" in messages[0]
    assert messages[-1].startswith("llm_compiler.driver.gone.f is listed")
