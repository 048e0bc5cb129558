"""Whether a target built with a pass list can still link: its own undefined symbols.

A pass list can make an object reference a symbol that nothing defines: a list without
an inliner leaves calls to C++ library functions that exist only as inline bodies
(``linkonce_odr`` definitions the list then drops), and the link fails. Whether that
can happen depends on the target, not on a test suite: a C unit never references
libstdc++'s inline-only templates.

The rule (:class:`LinkageCheck`): every undefined symbol of the target's object built
with the list must be one the target's IR declares (its own calls to other
translation units and libraries) or its ``default<Oz>`` object references, or
one the runtime libraries it links against export: the C library, libm, libgcc
(and ``libstdc++`` for C++), located by asking the toolchain's driver
(``clang -print-file-name``) and read with pyelftools. A list that makes the target
reference any other symbol is rejected for that target, naming the symbol. The check
needs no ``main`` and no run, so it also speaks for units that cannot be executed.

A build (the target's with the list, or its ``default<Oz>`` one) that runs past the
compiler's time limit says nothing about the list's symbols: the check is a TIMEOUT
that is :attr:`LinkageResult.transient` (it rejects the list for this check only, and
nothing decided by it may be cached), never a "does not build".

Reading those libraries takes seconds, and ``llm-compiler cc`` checks one unit per
process, so their exports are remembered on disk (:func:`runtime_exports`), with the
size and modification time of the driver and of each library: an upgraded C library
or LLVM is read again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput, LlmCompilerError
from llm_compiler.files import atomic_write_text, cache_dir
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.elf import elf_symbols, undefined_symbols
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.outcomes import Outcome

#: Runtime files of every target (asked of the driver by name), then C++'s own.
C_RUNTIME = ("libc.so.6", "libm.so.6", "libgcc_s.so.1", "libc_nonshared.a", "ld-linux-x86-64.so.2")
CXX_RUNTIME = ("libstdc++.so.6",)


def _archive_members(blob: bytes) -> Iterator[bytes]:
    """The member files of a Unix ``ar`` archive (the symbol index and name table skipped)."""
    if not blob.startswith(b"!<arch>\n"):
        raise InvalidInput("Not an ar archive.")
    offset = 8
    while offset + 60 <= len(blob):
        header = blob[offset : offset + 60]
        name, size = header[:16].strip(), int(header[48:58].strip() or 0)
        body = blob[offset + 60 : offset + 60 + size]
        if name not in (b"/", b"//", b"/SYM64/") and body.startswith(b"\x7fELF"):
            yield body
        offset += 60 + size + (size % 2)


def exported_symbols(path: Path) -> frozenset[str]:
    """The symbols a shared library or static archive defines for others."""
    return _exported(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _exported(path: Path, _mtime: int) -> frozenset[str]:
    blob = path.read_bytes()
    if blob.startswith(b"!<arch>\n"):
        return frozenset(
            name for member in _archive_members(blob) for name in elf_symbols(member, defined=True)
        )
    return frozenset(elf_symbols(blob, defined=True))


@functools.lru_cache(maxsize=8)
def runtime_libraries(toolchain: Toolchain, language: str) -> tuple[Path, ...]:
    """The runtime files a ``language`` target links against, as the driver finds them.

    Raises:
        InvalidInput: The driver knows none of them (no C library installed).
    """
    driver = toolchain.tool("clang++" if language == "c++" else "clang")
    names = C_RUNTIME + (CXX_RUNTIME if language == "c++" else ())
    found = []
    for name in names:
        result = run_command([driver, f"-print-file-name={name}"], timeout=60, subject=name)
        path = Path(result.stdout_text.strip())
        if path.is_absolute() and path.is_file():
            found.append(path.resolve())
    libgcc = run_command([driver, "-print-libgcc-file-name"], timeout=60, subject="libgcc")
    if Path(libgcc.stdout_text.strip()).is_file():
        found.append(Path(libgcc.stdout_text.strip()).resolve())
    if not any(path.name.startswith("libc.so") for path in found):
        raise InvalidInput(
            f"{driver} finds no C library (libc.so.6), so links cannot be judged; "
            "install the C library's development files (Debian: libc6-dev)."
        )
    return tuple(found)


def _identity(path: Path) -> list[object]:
    status = path.stat()
    return [str(path), status.st_size, status.st_mtime_ns]


@functools.lru_cache(maxsize=8)
def runtime_exports(toolchain: Toolchain, language: str) -> frozenset[str]:
    """Every symbol the runtime libraries of a ``language`` target export.

    Remembered in ``~/.cache/llm-compiler/runtime-exports`` by the driver (path, size,
    modification time) and language, and used while every library it lists is unchanged.
    """
    driver = toolchain.tool("clang++" if language == "c++" else "clang")
    memo: Path | None = None
    with contextlib.suppress(OSError):
        identity = json.dumps([_identity(driver.resolve()), language, toolchain.version])
        memo = cache_dir("runtime-exports") / f"{hashlib.sha256(identity.encode()).hexdigest()[:32]}.json"
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            remembered = json.loads(memo.read_text())
            if all(_identity(Path(entry[0])) == entry for entry in remembered["libraries"]):
                return frozenset(remembered["exports"])
    libraries = runtime_libraries(toolchain, language)
    exports: set[str] = set()
    for path in libraries:
        exports |= exported_symbols(path)
    if memo is not None:
        with contextlib.suppress(OSError, LlmCompilerError):  # a read-only cache costs the reading only
            record = {"libraries": [_identity(path) for path in libraries], "exports": sorted(exports)}
            atomic_write_text(memo, json.dumps(record))
    return frozenset(exports)


_DECLARATION = re.compile(
    r'^declare\b[^@\n]*@(?:"([^"]+)"|([-\w$.]+))\(|^@(?:"([^"]+)"|([-\w$.]+)) = (?:[\w ]*\s)?external\b',
    re.MULTILINE,
)


def declared_symbols(ir: str) -> frozenset[str]:
    """The functions and globals an IR module declares without defining them.

    These are the program's own references to other units and libraries. Inline-only
    library bodies (``available_externally`` or ``linkonce_odr`` definitions) are not
    declarations: a list that drops them and keeps the calls makes a reference nothing
    may resolve.
    """
    names = {next(group for group in match.groups() if group) for match in _DECLARATION.finditer(ir)}
    return frozenset(name for name in names if not name.startswith("llvm."))


_CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C", ".cp")


def target_language(program: Program) -> str:
    """``"c"`` or ``"c++"``: what runtime a program links against.

    IR files say it in their ``source_filename``; IR without one is C++ when it uses
    C++'s personality routine or mangled names, else C.
    """
    if program.language in ("c", "c++"):
        return program.language
    match = re.search(r'^source_filename = "(.*)"$', program.ir[:4096], re.MULTILINE)
    if match and match.group(1).endswith(_CXX_SUFFIXES):
        return "c++"
    if match and match.group(1).endswith(".c"):
        return "c"
    return "c++" if "__gxx_personality_v0" in program.ir or "@_Z" in program.ir else "c"


def build_command(compiler: Compiler, program: Program, pipeline: str) -> str:
    """A shell command that builds ``program.o`` from the program's IR with ``pipeline``
    (the IR ``llm-compiler compile FILE -o FILE.ll`` writes, for sources)."""
    tool = compiler.toolchain.tool
    source = program.source if program.language == "ir" and program.source else f"{program.name}.ll"
    opt = [str(tool("opt")), f"-passes={pipeline}", source]
    return f"{shlex.join(opt)} | {shlex.join([str(tool('llc')), '-filetype=obj', '-o', 'program.o'])}"


@dataclass(frozen=True)
class LinkageResult:
    """Whether a list keeps a target linkable, and the symbols that would not resolve.

    Attributes:
        passed: Whether the target built with the list would link.
        missing: The symbols nothing would resolve, sorted.
        detail: Why it failed, readable; "" when it passed.
        command: A shell command that replays the failure (empty when none does).
        transient: The check could not tell: a build ran past the compiler's time
            limit (:attr:`outcome` is TIMEOUT), which holds for this check only.
    """

    passed: bool
    missing: tuple[str, ...] = ()
    detail: str = ""
    command: str = ""
    transient: bool = False

    @property
    def outcome(self) -> Outcome:
        """PASS, TIMEOUT (:attr:`transient`) or LINK_FAIL."""
        if self.passed:
            return Outcome.PASS
        return Outcome.TIMEOUT if self.transient else Outcome.LINK_FAIL


def _timed_out(build: str, error: CompileTimeout) -> LinkageResult:
    """The transient result of a check whose ``build`` ran past the time limit."""
    detail = f"{build} ran past the compiler's time limit ({error})"
    return LinkageResult(
        False, (), f"{detail}; a timeout is not kept: checked again next time", transient=True
    )


class LinkageCheck:
    """Judges pass lists by the symbols they make a target reference (module docstring).

    Args:
        compiler: Builds the target's objects.
    """

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler
        self._allowed: dict[tuple[str, str], frozenset[str]] = {}

    def allowed(self, program: Program) -> frozenset[str]:
        """What ``program`` may reference: what its IR declares, what its -Oz object
        references, and the runtime libraries' exports.

        Raises:
            CommandFailed: The program does not build under -Oz (CompileTimeout: not
                within the compiler's time limit; nothing is remembered then).
        """
        language = target_language(program)
        key = (program.id, language)
        if key not in self._allowed:
            obj, _ = self.compiler.object_code(program, self.compiler.passes("default<Oz>"))
            own = undefined_symbols(obj) | declared_symbols(program.ir)
            self._allowed[key] = own | runtime_exports(self.compiler.toolchain, language)
        return self._allowed[key]

    def check(self, program: Program, passes: PassList) -> LinkageResult:
        """Builds ``program`` with ``passes`` and looks for references nothing resolves
        (a build past the compiler's time limit: a :attr:`~LinkageResult.transient`
        TIMEOUT)."""
        try:
            obj, _ = self.compiler.object_code(program, passes)
        except CompileTimeout as error:
            return _timed_out("the target's build with the list", error)
        except CommandFailed as error:
            return LinkageResult(False, (), f"the target does not build: {error}")
        result = self.check_object(program, obj)
        if result.passed or not result.missing:
            return result
        nm = shlex.join([str(self.compiler.toolchain.tool("llvm-nm")), "--undefined-only", "program.o"])
        command = f"{build_command(self.compiler, program, passes.pipeline)} && {nm}"
        return LinkageResult(False, result.missing, result.detail, command)

    def check_object(self, program: Program, obj: bytes) -> LinkageResult:
        """Looks for references nothing resolves in an object built from ``program``."""
        try:
            allowed = self.allowed(program)
        except CompileTimeout as error:
            return _timed_out("the target's default<Oz> build", error)
        except CommandFailed as error:
            return LinkageResult(False, (), f"the target does not build: {error}")
        missing = tuple(sorted(undefined_symbols(obj) - allowed))
        if not missing:
            return LinkageResult(True)
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        runtime = "C++" if target_language(program) == "c++" else "C"
        return LinkageResult(
            False,
            missing,
            detail=(
                f"the target would not link: it references {shown}, which the target neither "
                f"declares nor references under -Oz, and the {runtime} runtime libraries do not export"
            ),
        )
