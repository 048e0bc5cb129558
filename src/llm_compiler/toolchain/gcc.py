"""GCC as a reference: the size ``gcc -Os`` (and ``gcc -Os -flto``) gives the same unit.

A user who finds clang's ``-Oz`` too large could switch compilers; the evaluation
reports what GCC makes of each unit beside every LLVM system. This module

* finds the GCC driver for a target triple (:func:`gcc_driver`): the host's ``gcc`` or
  ``g++``, ``arm-none-eabi-gcc`` for bare-metal Arm (with ``-mthumb`` and the
  architecture of a ``thumb*`` triple), ``aarch64-linux-gnu-gcc`` for 64-bit Arm Linux;
  a missing one is an :class:`~llm_compiler.errors.InvalidInput` naming the Debian
  package to install;
* translates the front-end flags a unit was compiled with (clang's) into GCC's
  (:func:`translate_flags`): preprocessor and code-generation flags are kept, clang-only
  ones, warnings, optimization and debug levels and output flags are dropped, and any
  flag this GCC still does not recognise is dropped after one probe;
* preprocesses a source (:func:`preprocess`), as a corpus keeps it for later, and
  compiles one to an object (:func:`compile_object`): ``-Os -c``, or with ``lto``
  ``-Os -flto -c`` followed by an incremental link
  ``-Os -flto -r -nostdlib -flinker-output=nolto-rel``, which runs GCC's link-time
  optimizer over the unit and leaves one relocatable object of real code.

Every process goes through :func:`~llm_compiler.toolchain.runner.run_command`.
"""

from __future__ import annotations

import functools
import gzip
import platform
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput
from llm_compiler.toolchain.elf import section_names
from llm_compiler.toolchain.frontend import CXX_SUFFIXES, FrontendOptions, cross_sysroot
from llm_compiler.toolchain.runner import run_command

#: Flags of every GCC compile (the optimization level is GCC's size level).
OS_FLAGS = ("-Os",)
#: Suffixes of preprocessed sources, by language.
PREPROCESSED_SUFFIX = {"c": ".i", "c++": ".ii"}

# Flags dropped with the argument that follows them.
_DROP_WITH_VALUE = frozenset(
    {"-o", "-MF", "-MT", "-MQ", "-Xclang", "-mllvm", "-target", "-Xlinker", "-Xassembler", "-Xpreprocessor"}
    | {"-x", "-arch", "-isysroot", "-gcc-toolchain", "-resource-dir", "-ivfsoverlay"}
)
_DROP_EXACT = frozenset(
    {"-c", "-S", "-E", "-M", "-MM", "-MD", "-MMD", "-MP", "-pipe", "-emit-llvm", "-Qunused-arguments"}
    | {"-flto", "-fno-lto", "-fintegrated-as", "-fno-integrated-as", "-faddrsig", "-fno-addrsig"}
    | {"-fcolor-diagnostics", "-fno-color-diagnostics", "-fblocks", "-fno-blocks", "-fmodules"}
    | {"-fslp-vectorize", "-fno-slp-vectorize", "-fvectorize", "-fno-vectorize", "-mno-implicit-float"}
    | {"-fno-spell-checking", "-fno-legacy-pass-manager", "-fexperimental-new-pass-manager", "-v"}
)
_DROP_PREFIXES = (
    "-O", "-g", "-W", "-o", "--target=", "-target=", "--driver-mode", "-fdiagnostics",
    "-fcolor-diagnostics", "-flto=", "-fuse-ld", "-stdlib=", "-rtlib=", "-unwindlib=", "-fembed-bitcode",
    "-fprofile-instr", "-fcoverage-mapping", "-fexperimental", "-fcrash-diagnostics",
    "-fdebug-compilation-dir",
    "-fmacro-backtrace-limit", "-fconstant-cfstrings", "-fstrict-vtable-pointers", "-mstack-alignment",
    "-mretpoline", "-mspeculative-load-hardening", "-fsanitize-", "-fno-sanitize-", "--gcc-toolchain",
    "-resource-dir=", "-isysroot", "-MF", "-MT", "-MQ", "--analyze", "-ferror-limit", "-fmessage-length",
)  # fmt: skip
# Flags that take their value as the next argument and are kept with it.
_KEEP_WITH_VALUE = frozenset({"-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter"})
# Flags of the preprocessor (not needed once a source is preprocessed).
_PREPROCESSOR = ("-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-nostdinc")
# Flags kept as they are (the preprocessor's joined to their value, and code generation).
_KEPT_PREFIXES = (*_PREPROCESSOR, "-std=", "-m", "-f", "-ansi", "-pedantic", "-trigraphs")
# Flags kept as they are (the preprocessor's joined to their value, and code generation).
_KEPT_PREFIXES = (*_PREPROCESSOR, "-std=", "-m", "-f", "-ansi", "-pedantic", "-trigraphs")
_INPUT_SUFFIXES = frozenset({".c", ".i", ".ii", ".o", ".a", ".so", ".s", ".S", ".ll", ".bc", *CXX_SUFFIXES})

#: The Debian packages of each GCC driver.
PACKAGES = {
    "gcc": "gcc",
    "g++": "g++",
    "arm-none-eabi-gcc": "gcc-arm-none-eabi libnewlib-arm-none-eabi",
    "arm-none-eabi-g++": "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib",
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu",
}
# Architectures of Arm triples, as GCC's -march names them.
_ARM_ARCH = {
    "thumbv6m": "armv6-m", "thumbv7m": "armv7-m", "thumbv7em": "armv7e-m", "thumbv8m.base": "armv8-m.base",
    "thumbv8m.main": "armv8-m.main", "thumbv8.1m.main": "armv8.1-m.main", "armv7": "armv7-a",
    "armv7a": "armv7-a", "armv7m": "armv7-m", "armv7em": "armv7e-m", "armv6m": "armv6-m",
}  # fmt: skip


@dataclass(frozen=True)
class GccDriver:
    """A GCC driver for one target and language.

    Attributes:
        path: The driver found on ``PATH``.
        flags: Flags the target needs (``-mthumb``, ``-march=``...), before the unit's own.
    """

    path: Path
    flags: tuple[str, ...] = ()


def _is_host(target: str | None) -> bool:
    if not target:
        return True
    arch = target.split("-")[0]
    machine = platform.machine()
    same = arch == machine or (arch, machine) in {
        ("amd64", "x86_64"),
        ("x86_64", "amd64"),
        ("arm64", "aarch64"),
    }
    return same and "linux" in target


def driver_name(target: str | None, language: str = "c") -> tuple[str, tuple[str, ...]]:
    """The GCC driver's name for ``target`` and ``language`` and the flags the target needs.

    Raises:
        InvalidInput: No GCC is known for the target.

    Example:
        >>> driver_name("thumbv7em-none-eabi")
        ('arm-none-eabi-gcc', ('-mthumb', '-march=armv7e-m'))
    """
    suffix = "g++" if language == "c++" else "gcc"
    if _is_host(target):
        return suffix, ()
    assert target is not None
    arch, _, rest = target.partition("-")
    if re.fullmatch(r"(arm|armv7\w*|thumb\w*(\.\w+)*)", arch) and "none-eabi" in rest:
        flags: list[str] = []
        if arch.startswith("thumb"):
            flags.append("-mthumb")
        if arch in _ARM_ARCH:
            hard = rest.endswith("eabihf")
            flags.append(
                f"-march={_ARM_ARCH[arch]}" + ("+fp" if hard and arch.startswith("thumbv7e") else "")
            )
            if hard:
                flags.append("-mfloat-abi=hard")
        return f"arm-none-eabi-{suffix}", tuple(flags)
    if arch in ("aarch64", "arm64") and rest.endswith("linux-gnu"):
        return f"aarch64-linux-gnu-{suffix}", ()
    raise InvalidInput(
        f"No GCC is known for target {target!r}: gcc-os compares with the host's gcc, "
        "arm-none-eabi-gcc (arm-none-eabi, thumb*-none-eabi*, armv7*-none-eabi) and "
        "aarch64-linux-gnu-gcc (aarch64-linux-gnu)."
    )


def gcc_driver(target: str | None, language: str = "c") -> GccDriver:
    """The installed GCC driver for ``target`` (None: the host) and ``language``.

    Raises:
        InvalidInput: No GCC is known for the target, or it is not installed (the
            message names the Debian package to install).
    """
    name, flags = driver_name(target, language)
    found = shutil.which(name)
    if found is None:
        raise InvalidInput(
            f"{name} is not installed, so units for {target or 'the host'} cannot be compiled with GCC. "
            f"Install it (on Debian: apt-get install {PACKAGES[name]})."
        )
    return GccDriver(Path(found), flags)


def target_of(flags: Sequence[str]) -> str | None:
    """The target triple named in clang flags (``--target=T``, ``-target T``), or None."""
    target = None
    for index, flag in enumerate(flags):
        if flag.startswith(("--target=", "-target=")):
            target = flag.partition("=")[2]
        elif flag == "-target" and index + 1 < len(flags):
            target = flags[index + 1]
    return target


def _is_input(argument: str) -> bool:
    return not argument.startswith("-") and Path(argument).suffix in _INPUT_SUFFIXES


def translate_flags(flags: Sequence[str], *, target: str | None = None, preprocess: bool = True) -> list[str]:
    """GCC's flags for a unit compiled by clang with ``flags``.

    Keeps ``-I``/``-D``/``-U``/``-include``/``-isystem``/``-iquote``/``-std=``/``-m*``/
    ``-f*`` (and ``-ansi``, ``-nostdinc``, ``-pedantic``), drops clang-only flags
    (``--target``, ``-Xclang``, ``-mllvm``, ``-fcolor-diagnostics``...), warnings,
    optimization and debug levels, output and dependency flags, input files, and a
    ``--sysroot`` that is the host's or the one clang is given for a cross C library.

    Args:
        flags: clang's flags (a compile command without the compiler, or
            :meth:`FrontendOptions.to_flags`).
        target: The unit's target (its ``--sysroot`` for clang is dropped).
        preprocess: Keep the preprocessor's flags (False for a preprocessed source).

    Example:
        >>> translate_flags(["-Iinc", "-DX=1", "--target=x86_64-linux-gnu", "-O2", "-Wall", "-fPIC"])
        ['-Iinc', '-DX=1', '-fPIC']
    """
    kept: list[str] = []
    skip = 0
    clang_sysroot = cross_sysroot(target) if target else None
    for index, argument in enumerate(flags):
        if skip:
            skip -= 1
            continue
        if argument in _DROP_WITH_VALUE:
            skip = 1
            continue
        if argument in _KEEP_WITH_VALUE:
            value = flags[index + 1] if index + 1 < len(flags) else ""
            skip = 1
            if preprocess and value:
                kept += [argument, value]
            continue
        if argument == "--sysroot" or argument.startswith("--sysroot="):
            value = (
                argument.partition("=")[2]
                if "=" in argument
                else (flags[index + 1] if index + 1 < len(flags) else "")
            )
            skip = 0 if "=" in argument else 1
            if not _is_host(target) and value != clang_sysroot and value:
                kept.append(f"--sysroot={value}")
            continue
        if argument in _DROP_EXACT or argument.startswith(_DROP_PREFIXES) or _is_input(argument):
            continue
        if not preprocess and argument.startswith(_PREPROCESSOR):
            continue
        if argument.startswith(_KEPT_PREFIXES):
            kept.append(argument)
    return kept


def flags_of_options(options: FrontendOptions | None) -> list[str]:
    """GCC's flags for a source compiled with front-end ``options`` (see :func:`translate_flags`)."""
    options = options or FrontendOptions()
    flags = options.to_flags()
    return translate_flags(flags, target=options.target or target_of(flags))


def codegen_flags(flags: Sequence[str]) -> list[str]:
    """The code-generation part of GCC ``flags``: what compiling a preprocessed source needs."""
    return translate_flags(flags, target=None, preprocess=False)


@functools.lru_cache(maxsize=64)
def _unrecognized(driver: Path, flags: tuple[str, ...], timeout: float) -> frozenset[str]:
    """The ``flags`` ``driver`` does not recognise (one probe per driver and flags)."""
    probe: list[str | Path] = [driver, *flags, "-E", "-x", "c", "/dev/null", "-o", "/dev/null"]
    result = run_command(probe, timeout=timeout, check=False)
    if result.returncode == 0:
        return frozenset()
    pattern = r"unrecognized (?:command[- ]line option|argument in option) ['‘]([^'’]+)['’]"
    return frozenset(re.findall(pattern, result.stderr_text))


def _accepted(driver: GccDriver, flags: Sequence[str], timeout: float) -> list[str]:
    wanted = tuple(flag for flag in flags if flag.startswith(("-f", "-m")))
    unknown = _unrecognized(driver.path, wanted, timeout) if wanted else frozenset()
    return [flag for flag in flags if flag not in unknown and flag.partition("=")[0] not in unknown]


def _language(source: Path, language: str | None) -> str:
    if language:
        return language
    return "c++" if source.suffix in CXX_SUFFIXES or source.suffix == ".ii" else "c"


def _fail(driver: GccDriver, source: Path, error: CommandFailed) -> InvalidInput:
    lines = [line for line in error.stderr.splitlines() if "error" in line] or error.stderr.splitlines()
    detail = "\n".join(lines[:10]).strip() or "no diagnostic"
    return InvalidInput(
        f"{source} does not compile with {driver.path.name}: {detail}. Command: {error.command_line}."
    )


def preprocess(
    source: Path,
    flags: Sequence[str] = (),
    *,
    target: str | None = None,
    language: str | None = None,
    cwd: str | Path | None = None,
    timeout: float = 300.0,
) -> str:
    """``gcc -E`` of ``source`` with GCC ``flags`` (see :func:`translate_flags`).

    Raises:
        InvalidInput: GCC for the target is missing, or the source does not preprocess
            (with GCC's diagnostics).
        CompileTimeout: GCC ran past ``timeout``.
    """
    language = _language(source, language)
    driver = gcc_driver(target, language)
    command: list[str | Path] = [
        driver.path,
        *driver.flags,
        *_accepted(driver, flags, timeout),
        "-E",
        "-x",
        language,
        source,
    ]
    try:
        result = run_command(command, timeout=timeout, cwd=cwd, subject=str(source))
    except CompileTimeout:
        raise
    except CommandFailed as error:
        raise _fail(driver, source, error) from error
    return result.stdout_text


def compile_object(
    source: Path,
    flags: Sequence[str] = (),
    *,
    lto: bool,
    target: str | None,
    language: str | None = None,
    cwd: str | Path | None = None,
    timeout: float = 300.0,
) -> bytes:
    """The object GCC makes of ``source`` at ``-Os`` (with ``lto``, after its link-time optimizer).

    Args:
        source: A C or C++ file, or a preprocessed one (``.i``, ``.ii``).
        flags: GCC's flags for it (see :func:`translate_flags`).
        lto: ``-Os -flto -c`` then ``-Os -flto -r -nostdlib -flinker-output=nolto-rel``
            into one relocatable object of real code; else ``-Os -c``.
        target: The unit's target triple (None: the host).
        language: ``"c"`` or ``"c++"`` (default: from the suffix).
        cwd: Directory GCC runs in (relative paths of ``flags`` resolve against it).
        timeout: Seconds each GCC process may take.

    Raises:
        InvalidInput: GCC for the target is missing, the source does not compile (with
            GCC's diagnostics), or the link left no real code.
        CompileTimeout: GCC ran past ``timeout``.
    """
    driver = gcc_driver(target, _language(source, language))
    flags = _accepted(driver, flags, timeout)
    with tempfile.TemporaryDirectory(prefix="llm-compiler-gcc-") as scratch:
        first = Path(scratch) / "unit.o"
        base: list[str | Path] = [driver.path, *driver.flags, *flags, *OS_FLAGS]
        try:
            run_command(
                [*base, *(["-flto"] if lto else []), "-c", source, "-o", first],
                timeout=timeout,
                cwd=cwd,
                subject=str(source),
            )
            if not lto:
                return first.read_bytes()
            linked = Path(scratch) / "linked.o"
            link: list[str | Path] = [
                *base,
                "-flto",
                "-r",
                "-nostdlib",
                "-flinker-output=nolto-rel",
                first,
                "-o",
                linked,
            ]
            run_command(link, timeout=timeout, cwd=cwd, subject=str(source))
        except CompileTimeout:
            raise
        except CommandFailed as error:
            raise _fail(driver, source, error) from error
        blob = linked.read_bytes()
    names = section_names(blob)
    left = [name for name in names if name.startswith(".gnu.lto_")]
    if left or not any(name.startswith(".text") for name in names):
        raise InvalidInput(
            f"{source}: GCC's link-time optimization left no object of real code "
            f"({'LTO sections ' + ', '.join(left[:3]) if left else 'no .text section'}); check that "
            f"{driver.path.name} has the LTO plugin (gcc -v shows --enable-lto)."
        )
    return blob


@dataclass(frozen=True)
class GccSource:
    """What GCC needs to compile one unit.

    Attributes:
        path: The source file: C, C++, or preprocessed (``.i``/``.ii``, gzipped as a
            corpus stores it: ``.i.gz``).
        flags: GCC's flags for it (only code generation for a preprocessed one).
        target: The unit's target triple (None: the host).
        language: ``"c"`` or ``"c++"``.
        cwd: Directory GCC runs in.
    """

    path: Path
    flags: tuple[str, ...]
    target: str | None
    language: str
    cwd: str | None = None

    def compile(self, *, lto: bool, timeout: float = 300.0) -> bytes:
        """The unit's object from GCC at ``-Os`` (see :func:`compile_object`).

        Raises:
            InvalidInput: As :func:`compile_object`, or a stored source cannot be read.
            CompileTimeout: GCC ran past ``timeout``.
        """
        if self.path.suffix != ".gz":
            return compile_object(
                self.path, self.flags, lto=lto, target=self.target, language=self.language,
                cwd=self.cwd, timeout=timeout,
            )  # fmt: skip
        try:
            text = gzip.decompress(self.path.read_bytes())
        except (OSError, EOFError, gzip.BadGzipFile) as error:
            raise InvalidInput(f"{self.path}: cannot read the unit's GCC source ({error}).") from error
        with tempfile.TemporaryDirectory(prefix="llm-compiler-gcc-") as scratch:
            source = Path(scratch) / f"unit{PREPROCESSED_SUFFIX[self.language]}"
            source.write_bytes(text)
            return compile_object(
                source, self.flags, lto=lto, target=self.target, language=self.language,
                cwd=self.cwd, timeout=timeout,
            )  # fmt: skip
