"""Finding the LLVM installation that llm-compiler drives.

A :class:`Toolchain` is a directory of LLVM tools (clang, clang++, opt, llc,
llvm-size, llvm-extract...) of one LLVM version. It is found, in this order:

1. the ``llvm_bin`` argument (the CLI's ``--llvm-bin``);
2. the ``LLVM_BIN`` environment variable;
3. the newest ``/usr/lib/llvm-N/bin`` (Debian and Ubuntu layout) with N >= 17;
4. ``opt`` on ``PATH``, if its version is >= 17.

The version is read from ``opt --version`` and recorded in every measurement.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import LlmCompilerError, LLVMNotFound, ToolchainError
from llm_compiler.files import atomic_write_text, cache_dir
from llm_compiler.toolchain.runner import run_command

#: Oldest LLVM major version llm-compiler supports (the paper used 17.0.6).
MINIMUM_MAJOR = 17

#: Tools a toolchain must have.
REQUIRED_TOOLS = ("clang", "clang++", "opt", "llc")

_VERSION_RE = re.compile(r"LLVM version (\d+)\.(\d+)\.(\d+)")

INSTALL_HINT = (
    "Install LLVM with `sudo apt-get install clang-19 llvm-19 llvm-19-tools lld-19` "
    "(Debian 12 / Ubuntu 24.04) or run `bash scripts/setup.sh`, or point llm-compiler at "
    "an LLVM >= 17 with --llvm-bin DIR or the LLVM_BIN environment variable."
)


@dataclass(frozen=True)
class Toolchain:
    """An LLVM installation: a bin directory and its version.

    Attributes:
        bin_dir: Directory holding clang, opt, llc...
        version: Full version string, e.g. ``"19.1.7"``.
    """

    bin_dir: Path
    version: str

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def tool(self, name: str) -> Path:
        """The path of tool ``name`` (``opt``, ``llc``, ``clang++``...) in this toolchain.

        Raises:
            LLVMNotFound: The tool is not in ``bin_dir``.
        """
        path = self.bin_dir / name
        if not path.is_file():
            raise LLVMNotFound(
                f"{name} was not found in {self.bin_dir} (LLVM {self.version}). {INSTALL_HINT}"
            )
        return path


def _read_version(opt: Path) -> str | None:
    """``opt``'s LLVM version, remembered on disk by the binary's path, size and mtime:
    ``llm-compiler cc`` finds the toolchain once per unit of a build, and starting
    ``opt --version`` each time would cost a rebuild from the cache a process per unit."""
    memo: Path | None = None
    try:
        status = opt.resolve().stat()
        identity = f"{opt.resolve()}|{status.st_size}|{status.st_mtime_ns}"
        memo = cache_dir("llvm-versions") / hashlib.sha256(identity.encode()).hexdigest()[:32]
        remembered = memo.read_text().strip()
        if re.fullmatch(r"\d+\.\d+\.\d+", remembered):
            return remembered
    except OSError:
        pass
    try:
        result = run_command([opt, "--version"], timeout=30, check=False)
    except ToolchainError:
        return None
    match = _VERSION_RE.search(result.stdout_text + result.stderr_text)
    if match is None:
        return None
    version = ".".join(match.groups())
    if memo is not None:
        with contextlib.suppress(OSError, LlmCompilerError):  # a read-only cache only costs the process
            atomic_write_text(memo, version + "\n")
    return version


def _candidate_dirs() -> list[Path]:
    candidates: list[tuple[int, Path]] = []
    for directory in Path("/usr/lib").glob("llvm-*/bin"):
        suffix = directory.parent.name.removeprefix("llvm-")
        if suffix.isdigit():
            candidates.append((int(suffix), directory))
    dirs = [directory for _, directory in sorted(candidates, reverse=True)]
    on_path = shutil.which("opt")
    if on_path:
        dirs.append(Path(on_path).resolve().parent)
    return dirs


def _check_dir(directory: Path) -> Toolchain:
    if not (directory / "opt").is_file():
        raise LLVMNotFound(f"No `opt` in {directory}: it is not an LLVM bin directory. {INSTALL_HINT}")
    version = _read_version(directory / "opt")
    if version is None:
        raise LLVMNotFound(f"Could not read the LLVM version of {directory / 'opt'}. {INSTALL_HINT}")
    toolchain = Toolchain(directory.resolve(), version)
    if toolchain.major < MINIMUM_MAJOR:
        raise LLVMNotFound(
            f"{directory} holds LLVM {version}, but llm-compiler needs LLVM >= {MINIMUM_MAJOR}. "
            f"{INSTALL_HINT}"
        )
    missing = [tool for tool in REQUIRED_TOOLS if not (directory / tool).is_file()]
    if missing:
        raise LLVMNotFound(f"{directory} (LLVM {version}) lacks {', '.join(missing)}. {INSTALL_HINT}")
    return toolchain


@functools.lru_cache(maxsize=8)
def _find_cached(llvm_bin: str | None, env_bin: str | None) -> Toolchain:
    explicit = llvm_bin or env_bin
    if explicit:
        return _check_dir(Path(explicit))
    rejected: list[str] = []
    for directory in _candidate_dirs():
        try:
            return _check_dir(directory)
        except LLVMNotFound as error:
            rejected.append(f"{directory}: {str(error).split('. ')[0]}")
    looked = "; ".join(rejected) if rejected else "no /usr/lib/llvm-N/bin and no opt on PATH"
    raise LLVMNotFound(
        f"No LLVM >= {MINIMUM_MAJOR} found (looked at --llvm-bin, LLVM_BIN, /usr/lib/llvm-N/bin "
        f"and PATH; {looked}). {INSTALL_HINT}"
    )


def forget_found_toolchains() -> None:
    """Makes the next :func:`find_toolchain` look again (a long-lived process, between
    commands, since LLVM may be installed or removed meanwhile)."""
    _find_cached.cache_clear()


def find_toolchain(llvm_bin: str | os.PathLike[str] | None = None) -> Toolchain:
    """Finds the LLVM toolchain to use (see the module docstring for the order).

    Args:
        llvm_bin: An explicit LLVM bin directory; overrides everything else.

    Raises:
        LLVMNotFound: Nothing suitable was found, or the given directory is unusable.
    """
    return _find_cached(
        os.fspath(llvm_bin) if llvm_bin is not None else None, os.environ.get("LLVM_BIN") or None
    )
