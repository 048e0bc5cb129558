"""Direct hits: a rebuild of an unchanged unit answered without running its front end.

The object cache (:mod:`llm_compiler.driver.cache`) keys objects by the unit's IR, so
finding one costs the front end (a clang process) and Python's start, which for the small
units of most projects is more than clang's whole ``-Oz`` compile. A direct hit costs
neither: like ccache's direct mode, the cache also remembers, per compile command, the
files its front end read and the IR key it gave.

A **source key** (:func:`source_key`) covers what the front end's output can depend on
besides those files: the command (``cc`` or ``c++``) and its arguments as the build gave
them, the working directory, the driver's options, the environment variables clang reads
(``CPATH``, ``SOURCE_DATE_EPOCH``, ``CCC_OVERRIDE_OPTIONS``...), where LLVM is looked for,
this package's version, and the bytes of what the choosers know (tuned results, ranker
files). Its row in the store's ``sources`` table lists every file the front end read
(the source and each header, with a hash of its bytes), the LLVM tools used (by path,
size and modification time), the unit key of the object, the build's dependency file
and the front end's warnings. :func:`serve` finds the row, checks every file and tool,
and writes the object, the dependency file and the warnings as the compile made them.
Anything it cannot confirm (a changed header, a missing row, an evicted object, an
unreadable store) returns None, and the unit goes through the driver as before.

Rows are written by the driver after a compile whose object is cached
(:func:`remember`), and never for a unit whose files use ``__DATE__``, ``__TIME__`` or
``__TIMESTAMP__``, or changed while it was compiled. As with ccache, a header that
appears where the front end looked in vain (a new file earlier on the include path) is
not seen; ``--no-direct`` turns direct hits off.

This module imports only the standard library: it runs before anything else of a
``llm-compiler cc`` command, and a hit must cost about a process start.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llm_compiler import __version__

#: Bumped when what a row holds, or what its key covers, changes.
FORMAT = 1

#: The file of the store, inside the cache folder (shared with the object cache).
STORE_NAME = "objects.sqlite"

#: The table of source keys (created by the object cache with its own tables).
SOURCES_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    key TEXT PRIMARY KEY,
    unit_key TEXT NOT NULL,
    entry TEXT NOT NULL,
    created REAL NOT NULL
);
"""

#: The driver's options and the environment variables that also set them.
ENVIRONMENT = {
    "--results": "LLM_COMPILER_RESULTS",
    "--save-ir": "LLM_COMPILER_SAVE_IR",
    "--log": "LLM_COMPILER_CC_LOG",
    "--predictor": "LLM_COMPILER_PREDICTOR",
    "--oz": "LLM_COMPILER_OZ",
    "--objective": "LLM_COMPILER_OBJECTIVE",
    "--cache": "LLM_COMPILER_CACHE",
    "--cache-size": "LLM_COMPILER_CACHE_SIZE",
    "--whole-program": "LLM_COMPILER_WHOLE_PROGRAM",
    "--no-direct": "LLM_COMPILER_NO_DIRECT",
    "--no-server": "LLM_COMPILER_NO_SERVER",
    "--jobs": "LLM_COMPILER_CC_JOBS",
}

#: Driver options that take no value (an environment value other than "" or "0" sets them).
FLAGS = ("--oz", "--whole-program", "--no-direct", "--no-server")

#: Options that do not change what a compile writes, so they are not part of a source key.
_NOT_IN_KEY = ("--log", "--cache", "--cache-size", "--jobs", "--no-server")

#: Environment variables clang (or where LLVM is looked for) reads.
CLANG_ENVIRONMENT = (
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "OBJC_INCLUDE_PATH",
    "OBJCPLUS_INCLUDE_PATH",
    "SOURCE_DATE_EPOCH",
    "CCC_OVERRIDE_OPTIONS",
    "COMPILER_PATH",
    "LLVM_BIN",
    "PATH",
)

#: Macros whose value is not a function of the files: a unit using one is never remembered.
VOLATILE_MACROS = (b"__DATE__", b"__TIME__", b"__TIMESTAMP__")


def scan_options(arguments: Sequence[str], environ: Mapping[str, str]) -> tuple[dict[str, str], int]:
    """The driver options given before the compiler's arguments, merged with the environment.

    Returns:
        The options' values by name (``"1"`` for a flag) and the index of the first
        compiler argument. An option with its value missing maps to None's place: it is
        left out, and the index points past it (:func:`llm_compiler.cli.cc.parse_driver_options`
        reports it).
    """
    given: dict[str, str] = {}
    index = 0
    while index < len(arguments):
        name, equals, value = arguments[index].partition("=")
        if name not in ENVIRONMENT or (name in FLAGS and equals):
            break
        index += 1
        if name in FLAGS:
            given[name] = "1"
        elif equals:
            given[name] = value
        elif index < len(arguments):
            given[name] = arguments[index]
            index += 1
        else:
            raise ValueError(name)
    for name, variable in ENVIRONMENT.items():
        if name not in given and environ.get(variable):
            given[name] = environ[variable]
    return given, index


def is_set(given: Mapping[str, str], flag: str) -> bool:
    """Whether a flag of :data:`FLAGS` is on (given, or its variable not "" or "0")."""
    return given.get(flag, "0") not in ("", "0")


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/llm-compiler/cc`` (``~/.cache/llm-compiler/cc``)."""
    environ = os.environ if environ is None else environ
    base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "llm-compiler" / "cc"


def file_digest(paths: Iterable[Path]) -> str:
    """A hash of the files' names and bytes; a missing file counts as its name alone."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path).encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def choosers_text(*, oz: bool, predictor: str, results: Path | None) -> str:
    """What the choosers know, as text for a key: the options, the bytes of the tuned
    results, of the shipped rankers and of a ranker file named in the predictor spec."""
    if oz:
        return "oz"
    parts = [f"predictor={predictor}", "frames=chosen"]  # objects may hold frame pointers (driver/frames.py)
    if results is not None:
        parts.append(f"results={file_digest([results / 'best.jsonl'])}")
    if predictor != "none":
        shipped = Path(__file__).resolve().parent.parent / "predictor" / "data"
        files = list(shipped.glob("ranker-*.json"))
        tail = predictor.partition(":")[2]
        files += [Path(part) for part in tail.split(",") if part and "=" not in part]
        parts.append(f"rankers={file_digest(files)}")
    return "; ".join(parts)


def source_key(
    command: str, given: Mapping[str, str], arguments: Sequence[str], cwd: str, environ: Mapping[str, str]
) -> str:
    """The key of one compile command (module docstring).

    Args:
        command: ``cc`` or ``c++``.
        given: The driver's options (:func:`scan_options`).
        arguments: The compiler's arguments, as the build gave them.
        cwd: The directory the command runs in.
        environ: The command's environment.
    """
    results = given.get("--results")
    knowledge = choosers_text(
        oz=is_set(given, "--oz"),
        predictor=given.get("--predictor") or "builtin",
        results=Path(results) if results else None,
    )
    try:
        installed = sorted(name for name in os.listdir("/usr/lib") if name.startswith("llvm-"))
    except OSError:
        installed = []
    header = [
        FORMAT,
        __version__,
        command,
        sorted((name, value) for name, value in given.items() if name not in _NOT_IN_KEY),
        list(arguments),
        cwd,
        [(name, environ.get(name)) for name in CLANG_ENVIRONMENT],
        installed,
        knowledge,
    ]
    return hashlib.sha256(json.dumps(header).encode()).hexdigest()


def store_path(given: Mapping[str, str], environ: Mapping[str, str]) -> Path | None:
    """The store of the cache the options name (None: the cache is off)."""
    folder = given.get("--cache", "")
    if folder == "off":
        return None
    return (Path(folder) if folder else default_cache_dir(environ)) / STORE_NAME


# A hit ------------------------------------------------------------------------


def serve(
    command: str,
    arguments: Sequence[str],
    *,
    environ: Mapping[str, str] | None = None,
    stderr: Any = None,
) -> int | None:
    """Answers a compile from the cache without its front end; None when it cannot.

    Args:
        command: ``cc`` or ``c++``.
        arguments: Everything after the command (driver options, then the compiler's).
        environ: The environment (this process's by default).
        stderr: Where the front end's remembered warnings go (this process's stderr).

    Returns:
        0 when the object (and the dependency file, and the warnings) were written; None
        when the compile must go through the driver. It never raises.
    """
    started = time.monotonic()
    environ = os.environ if environ is None else environ
    try:
        given, index = scan_options(arguments, environ)
        rest = arguments[index:]
        if not rest or rest[0] in ("--stats", "--summary", "--help"):
            return None
        if any(is_set(given, flag) for flag in ("--no-direct", "--whole-program")) or given.get("--save-ir"):
            return None
        store = store_path(given, environ)
        if store is None or not store.is_file():
            return None
        cwd = os.getcwd()
        key = source_key(command, given, rest, cwd, environ)
        return _serve(store, key, cwd, given, stderr or sys.stderr.buffer, started)
    except Exception:  # whatever it is, the driver's own path deals with the compile
        return None


def _serve(
    store: Path, key: str, cwd: str, given: Mapping[str, str], stderr: Any, started: float
) -> int | None:
    import sqlite3

    db = sqlite3.connect(store, timeout=60.0, isolation_level=None)
    try:
        row = db.execute("SELECT unit_key, entry FROM sources WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        unit_key, entry = row[0], json.loads(row[1])
        if not _unchanged(entry):
            return None
        found = db.execute(
            "SELECT blobs.object, objects.record FROM objects JOIN blobs USING (key) WHERE key = ?",
            (unit_key,),
        ).fetchone()
        if found is None:
            return None
        _write(entry["output"], bytes(found[0]))
        if entry.get("depfile") is not None:
            _write(entry["depfile"][0], entry["depfile"][1].encode("latin-1"))
        if entry.get("stderr"):
            stderr.write(entry["stderr"].encode("latin-1"))
            stderr.flush()
        seconds = time.monotonic() - started
        if given.get("--log"):
            record = dict(json.loads(found[1]))
            record.update(source=entry["source"], output=entry["output"], cwd=cwd, cached=True)
            record["seconds"] = seconds
            append_line(Path(given["--log"]), record)
        with contextlib.suppress(sqlite3.Error):  # a read-only cache still serves
            db.execute("UPDATE objects SET used = ? WHERE key = ?", (time.time(), unit_key))
            for name in ("hit", "direct"):
                db.execute(
                    "INSERT INTO counters VALUES (?, 1, ?) ON CONFLICT(name) DO UPDATE SET "
                    "count = count + 1, seconds = seconds + excluded.seconds",
                    (name, seconds),
                )
        return 0
    finally:
        db.close()


def _unchanged(entry: Mapping[str, Any]) -> bool:
    """Whether every file the front end read holds the same bytes, and every tool is the same."""
    for path, size, modified in entry["tools"]:
        status = os.stat(path)
        if status.st_size != size or status.st_mtime_ns != modified:
            return False
    for path, digest in entry["inputs"]:
        try:
            with open(path, "rb") as stream:
                data = stream.read()
        except OSError:
            return False
        if hashlib.sha256(data).hexdigest() != digest:
            return False
    return True


def _write(path: str, data: bytes) -> None:
    """Writes ``data`` whole or not at all (a device such as /dev/null in place)."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            with open(path, "wb") as stream:
                stream.write(data)
            return
    except FileNotFoundError:
        pass
    temporary = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Appends ``record`` as one JSON line with one ``write`` (safe for parallel makes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(handle, (json.dumps(record) + "\n").encode())
    finally:
        os.close(handle)


# Remembering a compile ------------------------------------------------------------

#: What ``clang -M`` needs besides the front end's line: the front end's -O level (it
#: defines ``__OPTIMIZE__``, which headers test) and one rule on standard output.
LISTING_FLAGS = ("-Oz", "-M", "-MT", "unit", "-o", "-")


def listed_files(rule: str) -> list[str]:
    r"""The prerequisites of the make rule ``clang -M`` prints.

    Example:
        >>> listed_files("unit: a.c /usr/include/stdio.h \\\n  my\\ dir/b.h\n")
        ['a.c', '/usr/include/stdio.h', 'my dir/b.h']
    """
    body = rule.partition(":")[2].replace("\\\n", " ")
    files: list[str] = []
    current = ""
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body) and body[index + 1] in " #":
            current += body[index + 1]
            index += 2
            continue
        if char == "$" and body[index + 1 : index + 2] == "$":
            current += "$"
            index += 2
            continue
        if char.isspace():
            if current:
                files.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        files.append(current)
    return files


def tool_identity(tool: Path) -> list[Any]:
    """A program by the file it resolves to, its size and modification time (ns): what
    tells an LLVM upgraded in place from the one before (:func:`_unchanged` checks it).

    Raises:
        OSError: The program is missing.
    """
    real = Path(tool).resolve()
    status = real.stat()
    return [str(real), status.st_size, status.st_mtime_ns]


def source_entry(
    *,
    source: str,
    output: str,
    rule: str,
    dependency_output: str | None,
    warnings: bytes,
    tools: Sequence[Path],
    since_ns: int,
) -> dict[str, Any] | None:
    """The row :func:`serve` checks for a compile, or None when it must not be remembered.

    Args:
        source: The unit's source, as the build named it.
        output: The object the build expects.
        rule: What ``clang -M`` printed for the unit (:data:`LISTING_FLAGS`).
        dependency_output: The dependency file the build asked for (already written).
        warnings: What the front end wrote on stderr.
        tools: The LLVM programs the compile ran.
        since_ns: When the compile started (``time.time_ns()``): a file changed after it
            may not be what the front end read.
    """
    inputs = []
    for name in listed_files(rule):
        with open(name, "rb") as stream:
            data = stream.read()
            modified = os.fstat(stream.fileno()).st_mtime_ns
        if modified >= since_ns or any(macro in data for macro in VOLATILE_MACROS):
            return None
        inputs.append([name, hashlib.sha256(data).hexdigest()])
    if not inputs:
        return None
    depfile = None
    if dependency_output is not None:
        depfile = [dependency_output, Path(dependency_output).read_bytes().decode("latin-1")]
    programs = [tool_identity(tool) for tool in tools]
    return {
        "source": source,
        "output": output,
        "depfile": depfile,
        "stderr": warnings.decode("latin-1"),
        "inputs": inputs,
        "tools": programs,
    }
