"""The front end: C and C++ to unoptimized LLVM-IR, the way LLM Compiler's models saw it.

The released models were trained on clang's ``-Oz`` front-end output with the LLVM
passes disabled (system notes, section 10): functions carry ``minsize optsize``, TBAA
metadata is present, nothing is optimized yet. :func:`emit_ir` produces exactly that::

    clang -Oz -Xclang -disable-llvm-passes -emit-llvm -S  (clang++ for C++)

with the user's include directories, defines, target triple and extra flags.
:func:`flags_from_compile_command` turns a ``compile_commands.json`` entry into the
same call, keeping what affects the code (includes, defines, language standard,
target, code-generation flags) and dropping what would clash (outputs, dependency
files, optimization and debug levels, ``-Werror``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

C_SUFFIXES = frozenset({".c"})
CXX_SUFFIXES = frozenset({".cc", ".cpp", ".cxx", ".c++", ".C", ".cp"})
IR_SUFFIXES = frozenset({".ll", ".bc"})
SOURCE_SUFFIXES = C_SUFFIXES | CXX_SUFFIXES | IR_SUFFIXES

#: The flags that make clang emit the models' unoptimized IR.
FRONTEND_FLAGS = ("-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-S")

# compile_commands.json flags dropped, with how many arguments follow each.
_DROP_WITH_VALUE = frozenset({"-o", "-MF", "-MT", "-MQ", "-Xclang"})
_DROP_EXACT = frozenset({"-c", "-S", "-E", "-M", "-MM", "-MD", "-MMD", "-MP", "-Werror", "-pipe"})
# Positional inputs of a compile or link line: sources, objects, archives.
_INPUT_SUFFIXES = SOURCE_SUFFIXES | {".o", ".a", ".so", ".s", ".S", ".i", ".ii"}
# Flags whose value is the next argument and may look like a file name.
_TAKES_VALUE = frozenset({"-include", "-imacros", "-I", "-isystem", "-iquote", "-idirafter", "-x"})
_DROP_PREFIXES = ("-O", "-g", "-Werror=", "-fdiagnostics", "-fcolor-diagnostics", "-o")


@dataclass(frozen=True)
class FrontendOptions:
    """How to turn a source file into IR.

    Attributes:
        include_dirs: ``-I`` directories.
        defines: ``-D`` macros: name to value (None for a bare ``-DNAME``).
        target: A target triple (``--target=``), or None for the host.
        extra_flags: Further clang flags, passed as given (e.g. ``-std=c11``).
        cwd: Directory the compiler runs in (relative paths resolve against it).
    """

    include_dirs: tuple[str, ...] = ()
    defines: Mapping[str, str | None] = field(default_factory=dict)
    target: str | None = None
    extra_flags: tuple[str, ...] = ()
    cwd: str | None = None

    def to_flags(self) -> list[str]:
        flags = [f"-I{directory}" for directory in self.include_dirs]
        for name, value in self.defines.items():
            flags.append(f"-D{name}" if value is None else f"-D{name}={value}")
        if self.target:
            flags.append(f"--target={self.target}")
            sysroot = cross_sysroot(self.target)
            if sysroot and not any(flag.startswith("--sysroot") for flag in self.extra_flags):
                flags.append(f"--sysroot={sysroot}")
        flags.extend(self.extra_flags)
        return flags


def cross_sysroot(target: str) -> str | None:
    """Debian's C library for a cross target, when clang would not find it itself.

    Debian installs a cross C library (``libc6-dev-arm64-cross`` for
    ``aarch64-linux-gnu``) under ``/usr/<triple>``; clang searches it only when a GCC
    cross compiler for the triple is installed too. Without one, the host's headers
    would be used, which fail for another architecture. For ARM bare-metal triples it
    is newlib under ``/usr/lib/arm-none-eabi`` (``libnewlib-arm-none-eabi``), which
    clang does not search.
    """
    bare = bare_metal_triple(target)
    if bare is not None:  # newlib (libnewlib-arm-none-eabi) for every ARM bare-metal triple
        root = Path("/usr/lib") / bare
        return str(root) if (root / "include").is_dir() else None
    root = Path("/usr") / target
    if (root / "include").is_dir() and not (Path("/usr/lib/gcc-cross") / target).is_dir():
        return str(root)
    return None


def bare_metal_triple(target: str) -> str | None:
    """``arm-none-eabi`` for the ARM bare-metal triples (``thumbv7em-none-eabi``,
    ``armv7m-none-eabihf``...), whose C library Debian installs as newlib; else None."""
    arch, _, rest = target.partition("-")
    if arch.startswith(("arm", "thumb")) and rest.startswith(("none-eabi", "unknown-none-eabi")):
        return "arm-none-eabi"
    return None


def language_of(path: Path) -> str:
    """``"c"``, ``"c++"`` or ``"ir"`` from a file's suffix.

    Raises:
        InvalidInput: The suffix is not one llm-compiler handles.
    """
    suffix = path.suffix
    if suffix in C_SUFFIXES:
        return "c"
    if suffix in CXX_SUFFIXES:
        return "c++"
    if suffix in IR_SUFFIXES:
        return "ir"
    raise InvalidInput(
        f"{path}: unknown kind of file {suffix or '(no suffix)'!r}. llm-compiler reads C "
        f"(.c), C++ ({', '.join(sorted(CXX_SUFFIXES))}) and LLVM-IR (.ll, .bc)."
    )


def emit_ir(
    toolchain: Toolchain,
    source: Path,
    options: FrontendOptions | None = None,
    *,
    timeout: float = 300.0,
) -> str:
    """Compiles C or C++ ``source`` to unoptimized textual LLVM-IR.

    Args:
        toolchain: The LLVM installation.
        source: A ``.c`` or C++ file.
        options: Include dirs, defines, target and extra flags.
        timeout: Seconds before the compile is killed.

    Returns:
        The IR text (``clang -Oz -Xclang -disable-llvm-passes -emit-llvm -S``).

    Raises:
        InvalidInput: The file is missing, of an unknown kind, or does not compile.
        CompileTimeout: clang ran past ``timeout``.
    """
    options = options or FrontendOptions()
    base = Path(options.cwd) if options.cwd else Path.cwd()
    resolved = source if source.is_absolute() else base / source
    if not resolved.is_file():
        raise InvalidInput(f"{source}: no such file.")
    language = language_of(source)
    if language == "ir":
        raise InvalidInput(f"{source} is already IR; load it instead of compiling it.")
    compiler = toolchain.tool("clang++" if language == "c++" else "clang")
    command: list[str | Path] = [
        compiler,
        *FRONTEND_FLAGS,
        *options.to_flags(),
        "-o",
        "-",
        "-x",
        language,
        resolved,
    ]
    try:
        result = run_command(command, timeout=timeout, cwd=options.cwd, subject=str(source))
    except CommandFailed as error:
        if error.crashed or isinstance(error, CompileTimeout):
            raise
        hint = "Fix the source, or pass the include directories (-I) and defines (-D) its build uses."
        if options.target and "file not found" in error.stderr:
            library = (
                "libnewlib-arm-none-eabi"
                if bare_metal_triple(options.target)
                else "libc6-dev-<arch>-cross, e.g. libc6-dev-arm64-cross for aarch64-linux-gnu"
            )
            hint = (
                f"For --target {options.target}, install the target's C library (on Debian "
                f"{library}) or pass --sysroot. " + hint
            )
        raise InvalidInput(
            f"{source} does not compile with {compiler.name} (LLVM {toolchain.version}): "
            f"{_first_diagnostic(error.stderr)}. {hint}"
        ) from error
    return result.stdout_text


def _first_diagnostic(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[0] if lines else "no diagnostic"


@dataclass(frozen=True)
class CompileCommand:
    """One entry of a ``compile_commands.json`` file."""

    directory: str
    file: str
    arguments: tuple[str, ...]

    @classmethod
    def from_entry(cls, entry: Mapping[str, object]) -> CompileCommand:
        """Reads an entry with ``arguments`` (a list) or ``command`` (a shell string).

        Raises:
            InvalidInput: The entry lacks ``directory``, ``file`` or a command.
        """
        try:
            directory = str(entry["directory"])
            file = str(entry["file"])
        except KeyError as missing:
            raise InvalidInput(f"compile_commands.json entry without {missing}: {entry!r}") from None
        if "arguments" in entry and isinstance(entry["arguments"], list):
            arguments = tuple(str(argument) for argument in entry["arguments"])
        elif "command" in entry:
            arguments = tuple(shlex.split(str(entry["command"])))
        else:
            raise InvalidInput(f"compile_commands.json entry for {file} has no command or arguments.")
        return cls(directory, file, arguments)

    @property
    def source(self) -> Path:
        path = Path(self.file)
        return path if path.is_absolute() else Path(self.directory) / path


def _is_input_file(argument: str) -> bool:
    return not argument.startswith("-") and Path(argument).suffix in _INPUT_SUFFIXES


def flags_from_compile_command(command: CompileCommand) -> FrontendOptions:
    """The front-end options equivalent to a build's compile command.

    The compiler name, the source file (and any other input files of a line that
    compiles several), output and dependency-file flags, ``-c``,
    optimization and debug levels and ``-Werror`` are dropped; the rest (``-I``, ``-D``,
    ``-std=``, ``-f...``, ``--target``...) is kept in order.
    """
    arguments = list(command.arguments[1:])
    kept: list[str] = []
    skip = 0
    source_names = {command.file, str(command.source)}
    for argument in arguments:
        if skip:
            skip -= 1
            continue
        if argument in _DROP_WITH_VALUE:
            skip = 1
            continue
        if argument in _DROP_EXACT or argument in source_names:
            continue
        if _is_input_file(argument) and not (kept and kept[-1] in _TAKES_VALUE):
            continue  # one command compiling several files lists all of them
        if argument.startswith(_DROP_PREFIXES) and not argument.startswith("-g-"):
            continue
        kept.append(argument)
    return FrontendOptions(extra_flags=tuple(kept), cwd=command.directory)
