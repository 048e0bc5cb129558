"""Files written the same way everywhere: the cache folder, atomic writes, JSONL and Parquet.

* :func:`cache_dir` is the one place that says where llm-compiler keeps caches:
  ``$XDG_CACHE_HOME/llm-compiler`` (``~/.cache/llm-compiler``), one folder per use.
* :func:`atomic_write_text` and :func:`atomic_write_bytes` write a file whole or not at
  all (a temporary file in the same folder, then a rename), so that a killed run never
  leaves a cache or a result file half written for the next run to trip on. The file
  gets the permissions ``Path.write_text`` would give it: a replaced file's own, else
  those the umask allows.
* :func:`write_jsonl`, :func:`write_parquet` and :func:`jsonl_to_parquet` write tables:
  JSONL always, Parquet when pyarrow is installed (``pip install 'llm-compiler[parquet]'``).
* :func:`enable_wal` opens every SQLite store the same way, so that processes sharing one
  wait for each other instead of failing.
* :class:`RunDir` is a run's output folder: the settings that identify the run
  (checked before a run is resumed), records appended one line at a time as each is
  done, read back with a line torn by a kill dropped, and reports written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llm_compiler.errors import InvalidInput, LlmCompilerError


def cache_dir(*parts: str) -> Path:
    """The cache folder for ``parts`` (not created).

    Example:
        >>> cache_dir("passes").name
        'passes'
    """
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base.joinpath("llm-compiler", *parts)


def file_sha256(path: Path) -> str:
    """The SHA-256 of ``path``'s bytes, in hex (read in blocks: any size)."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Writes ``data`` to ``path`` whole or not at all (parents are created)."""
    handle, temporary = _new_temporary(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` whole or not at all (parents are created)."""
    return atomic_write_bytes(path, text.encode())


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Writes one JSON object per line, atomically; returns the records written."""
    rows = [dict(record) for record in records]
    atomic_write_text(path, "".join(json.dumps(row) + "\n" for row in rows))
    return rows


def have_pyarrow() -> bool:
    """Whether Parquet files can be written here."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def _require_pyarrow() -> None:
    if not have_pyarrow():
        raise LlmCompilerError("Writing Parquet needs pyarrow: pip install 'llm-compiler[parquet]'.")


def write_parquet(
    path: Path, rows: Sequence[Mapping[str, Any]], *, json_columns: Iterable[str] = (), required: bool = False
) -> bool:
    """Writes ``rows`` as a Parquet table; returns False when pyarrow is missing.

    Args:
        path: The file to write (atomically).
        rows: One mapping per row.
        json_columns: Columns whose values are stored as JSON text (values whose shape
            varies from row to row, which Parquet's columns cannot hold).
        required: Raise instead of returning False when pyarrow is missing.

    Raises:
        LlmCompilerError: ``required`` and pyarrow is not installed.
    """
    if not have_pyarrow():
        if required:
            _require_pyarrow()
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    encoded = set(json_columns)
    table = pa.Table.from_pylist(
        [{k: json.dumps(v, sort_keys=True) if k in encoded else v for k, v in row.items()} for row in rows]
    )
    _write_table(path, table, pq)
    return True


def jsonl_to_parquet(jsonl: Path) -> bool:
    """Writes the Parquet copy of a JSONL file next to it (nested fields kept as structs)."""
    if not have_pyarrow():
        return False
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    _write_table(jsonl.with_suffix(".parquet"), pj.read_json(jsonl), pq)
    return True


def _write_table(path: Path, table: Any, pq: Any) -> None:
    handle, temporary = _new_temporary(path)
    os.close(handle)
    try:
        pq.write_table(table, str(temporary))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _new_temporary(path: Path) -> tuple[int, Path]:
    """Creates an empty file beside ``path`` (parents too) to be renamed to ``path``.

    Its permissions are those ``path.write_text`` would leave: ``path``'s own when it
    exists, else ``0o666`` less the umask. (``tempfile.mkstemp`` would make every result
    and cache file readable by its owner only.)

    Returns:
        The open file descriptor (write-only) and the file's path.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        keep = None
    for _ in range(100):
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            if keep is not None:
                os.fchmod(handle, keep)
        except BaseException:
            os.close(handle)
            temporary.unlink(missing_ok=True)
            raise
        return handle, temporary
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name} after 100 tries")


class RunDir:
    """A run's output folder, resumable (module docstring).

    Args:
        path: The folder (created).
        identity: The settings a resumed run must share (written to ``settings.json``).
        resume: Continue the records already there (else there must be none).
        records: The name of the records file.

    Raises:
        InvalidInput: Records are there and ``resume`` is off, or they were made with
            other settings.
    """

    SETTINGS = "settings.json"

    def __init__(
        self, path: Path, identity: Mapping[str, Any], *, resume: bool, records: str = "results.jsonl"
    ) -> None:
        self.path = Path(path)
        self.records_path = self.path / records
        settings = self.path / self.SETTINGS
        if self.records_path.exists() and not resume:
            raise InvalidInput(
                f"{self.path} holds results of an earlier run: add --resume to continue it, "
                "or use another --out."
            )
        wanted = json.loads(json.dumps(dict(identity)))
        if settings.exists() and resume:
            earlier = json.loads(settings.read_text())
            if earlier != wanted:
                raise InvalidInput(
                    f"{self.path} was made with other settings ({settings}); --resume needs the same ones. "
                    f"Earlier: {json.dumps(earlier)}; now: {json.dumps(wanted)}."
                )
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(settings, json.dumps(wanted, indent=2, sort_keys=True) + "\n")

    def records(self) -> list[dict[str, Any]]:
        """The records written so far; a line torn by a kill is dropped."""
        if not self.records_path.is_file():
            return []
        rows = []
        for line in self.records_path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return rows

    def append(self, record: Mapping[str, Any]) -> None:
        """Appends one record as one line, flushed to the file before returning.

        A torn last line (a run killed mid-write) is ended first, so that it is the only
        record lost.
        """
        line = json.dumps(dict(record)) + "\n"
        with self.records_path.open("a+b") as stream:
            if stream.tell() > 0:
                stream.seek(-1, os.SEEK_END)
                if stream.read(1) != b"\n":
                    line = "\n" + line
            stream.write(line.encode())
            stream.flush()
            os.fsync(stream.fileno())

    def write_text(self, name: str, text: str) -> Path:
        """Writes a report file of the run whole or not at all."""
        return atomic_write_text(self.path / name, text)


def enable_wal(db: sqlite3.Connection, seconds: float = 60.0) -> None:
    """Switches the SQLite database ``db`` to WAL, waiting for other processes: the switch
    can answer "database is locked" at once, busy timeout or not, while another process
    opens the same new store (the compiles of a ``make -j``, PassListEval's workers).

    Raises:
        sqlite3.OperationalError: Another error, or still locked after ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
