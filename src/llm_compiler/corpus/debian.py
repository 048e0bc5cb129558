"""Debian source packages: fetching sources by name, pinned, with their licences.

``apt-get source`` needs source (``deb-src``) entries. When the machine has none,
:func:`ensure_source_entries` adds them next to its existing binary entries (the
same mirrors, suites and components: no mirror is ever hard-coded) and refreshes
the package lists; that needs root, and the error says so otherwise.

:func:`fetch_source` (through :func:`source_versions`) ensures them itself, then tries
the versions apt knows from newest to oldest, so a mirror
that lacks one pool (say, security updates) still yields the package, and records the
version and the ``.dsc`` digest so a rebuild fetches exactly the same sources.
:func:`read_licence` reads the licence of a file from ``debian/copyright``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from llm_compiler.errors import CommandFailed, LlmCompilerError
from llm_compiler.toolchain.runner import run_command

SOURCES_DIR = Path("/etc/apt/sources.list.d")
#: The file :func:`ensure_source_entries` writes.
ADDED_SOURCES = SOURCES_DIR / "llm-compiler-deb-src.sources"
ADDED_LIST = SOURCES_DIR / "llm-compiler-deb-src.list"


class DebianError(LlmCompilerError):
    """A source package could not be fetched."""


@dataclass(frozen=True)
class SourcePackage:
    """An unpacked Debian source package.

    Attributes:
        name: The source package name (``apt-get source`` maps binary names to it).
        version: The Debian version fetched.
        directory: The unpacked tree.
        dsc_sha256: SHA-256 of the ``.dsc`` file, which pins every file of the package.
    """

    name: str
    version: str
    directory: Path
    dsc_sha256: str


def _apt(command: list[str], timeout: float = 600.0, cwd: Path | None = None) -> str:
    environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive", LC_ALL="C")
    return run_command(command, timeout=timeout, env=environment, cwd=cwd).stdout_text


def has_source_entries() -> bool:
    """Whether apt has source package lists."""
    try:
        _apt(["apt-cache", "showsrc", "dpkg"], timeout=60)
    except CommandFailed:
        return False
    return True


def _source_stanzas(text: str) -> list[str]:
    """deb822 stanzas with ``Types: deb`` turned into ``deb-src`` ones."""
    stanzas = []
    for stanza in re.split(r"\n\s*\n", text):
        lines = [line for line in stanza.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        types = [line for line in lines if line.lower().startswith("types:")]
        if not types or "deb-src" in types[0].split():
            continue
        if "deb" not in types[0].split()[1:]:
            continue
        stanzas.append("\n".join("Types: deb-src" if line in types else line for line in lines))
    return stanzas


def _source_lines(text: str) -> list[str]:
    return [
        "deb-src" + line.strip()[3:]
        for line in text.splitlines()
        if line.strip().startswith("deb ") and "cdrom:" not in line
    ]


def ensure_source_entries() -> bool:
    """Adds ``deb-src`` entries mirroring the machine's ``deb`` ones, when apt has none.

    Returns:
        True when entries were added (and the package lists refreshed).

    Raises:
        DebianError: Not root, or the machine has no Debian entries to mirror.
    """
    if has_source_entries():
        return False
    if os.geteuid() != 0:
        raise DebianError(
            "apt has no source entries (deb-src) and adding them needs root. Enable them "
            "(add 'deb-src' to the Types: lines in /etc/apt/sources.list.d/*.sources, then "
            "`sudo apt-get update`), or rerun as root."
        )
    stanzas: list[str] = []
    lines: list[str] = []
    for path in sorted(SOURCES_DIR.glob("*.sources")):
        if path != ADDED_SOURCES:
            stanzas.extend(_source_stanzas(path.read_text()))
    for path in [Path("/etc/apt/sources.list"), *sorted(SOURCES_DIR.glob("*.list"))]:
        if path.is_file() and path != ADDED_LIST:
            lines.extend(_source_lines(path.read_text()))
    if not stanzas and not lines:
        raise DebianError("apt has no Debian entries (deb) to mirror as source entries (deb-src).")
    header = "# Added by llm-compiler: source entries mirroring the binary ones.\n"
    if stanzas:
        ADDED_SOURCES.write_text(header + "\n\n".join(stanzas) + "\n")
    if lines:
        ADDED_LIST.write_text(header + "\n".join(lines) + "\n")
    _apt(["apt-get", "update", "-q"], timeout=900)
    return True


def _compare_versions(left: str, right: str) -> int:
    if left == right:
        return 0
    result = run_command(["dpkg", "--compare-versions", left, "lt", right], timeout=30, check=False)
    return -1 if result.returncode == 0 else 1


def source_versions(name: str) -> tuple[str, list[str]]:
    """The source package behind ``name`` and its versions apt knows, newest first.

    Source entries are added first where apt has none (:func:`ensure_source_entries`),
    so every caller, not only the corpus builder, works on a machine that never had them.

    Raises:
        DebianError: apt knows no such package, or source entries are missing and
            cannot be added.
    """
    ensure_source_entries()
    try:
        text = _apt(["apt-cache", "showsrc", name], timeout=120)
    except CommandFailed as error:
        raise DebianError(f"apt knows no source package {name!r}: {error.stderr.strip()}") from error
    source = ""
    versions: set[str] = set()
    for stanza in re.split(r"\n\s*\n", text):
        fields = dict(
            (line.split(":", 1)[0], line.split(":", 1)[1].strip())
            for line in stanza.splitlines()
            if ":" in line and not line.startswith(" ")
        )
        if "Package" in fields and "Version" in fields:
            binaries = {b.strip() for b in fields.get("Binary", "").split(",")}
            if fields["Package"] == name or name in binaries:
                source = source or fields["Package"]
                if fields["Package"] == source:
                    versions.add(fields["Version"])
    if not versions:
        raise DebianError(f"apt knows no source package {name!r}.")
    ordered = sorted(versions, key=functools.cmp_to_key(_compare_versions), reverse=True)
    return source, ordered


def _unpacked_tree(directory: Path, before: set[Path]) -> Path:
    trees = [path for path in directory.iterdir() if path.is_dir() and path not in before]
    if len(trees) != 1:
        raise DebianError(f"apt-get source left {len(trees)} new folders in {directory}; expected one.")
    return trees[0]


def fetch_source(name: str, destination: Path, version: str | None = None) -> SourcePackage:
    """Downloads and unpacks a source package into ``destination``.

    Args:
        name: A source or binary package name.
        destination: An existing folder to unpack into.
        version: A pinned version; otherwise the newest version that downloads.

    Raises:
        DebianError: No version could be fetched (each attempt's error is given).
    """
    if shutil.which("dpkg-source") is None:
        raise DebianError("apt-get source needs dpkg-source: sudo apt-get install dpkg-dev.")
    source, versions = source_versions(name)
    if version is not None:
        if version not in versions:
            raise DebianError(
                f"{source} {version} is not offered by apt (it offers {', '.join(versions)}). "
                "Remove the pin from packages.json to take the newest."
            )
        versions = [version]
    errors = []
    for candidate in versions:
        before = set(destination.iterdir())
        try:
            _apt(
                ["apt-get", "source", "-q", "--only-source", f"{source}={candidate}"],
                timeout=1800,
                cwd=destination,
            )
        except CommandFailed as error:
            last = [line for line in error.stderr.splitlines() if line.startswith("E:")]
            errors.append(f"{candidate}: {last[0] if last else error}")
            for leftover in set(destination.iterdir()) - before:
                shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
            continue
        dsc = next(destination.glob(f"{source}_{candidate.split(':')[-1]}.dsc"), None)
        digest = hashlib.sha256(dsc.read_bytes()).hexdigest() if dsc else ""
        tree = _unpacked_tree(destination, before)
        return SourcePackage(source, candidate, tree, digest)
    raise DebianError(f"could not fetch {source}: " + "; ".join(errors))


def read_licence(tree: Path, file: str = "") -> str:
    """The licence of ``file`` (relative to the tree) from ``debian/copyright``.

    Machine-readable copyright files are matched by their ``Files:`` patterns (the last
    matching stanza wins, as the format specifies); otherwise the first ``License:``
    line, or ``"unknown"``.
    """
    path = tree / "debian" / "copyright"
    if not path.is_file():
        return "unknown"
    text = path.read_text(errors="replace")
    licence = "unknown"
    first = ""
    for stanza in re.split(r"\n\s*\n", text):
        files = re.search(r"^Files:\s*(.+(?:\n[ \t].+)*)", stanza, re.MULTILINE)
        found = re.search(r"^License:\s*(.+)$", stanza, re.MULTILINE)
        if not found:
            continue
        first = first or found.group(1).strip()
        if files and any(fnmatch(file or "x", pattern) for pattern in files.group(1).split()):
            licence = found.group(1).strip()
    return licence if licence != "unknown" else (first or "unknown")
