"""Files written the same way everywhere: the cache folder, atomic writes, JSONL and Parquet.

* :func:`cache_dir` is the one place that says where llm-compiler keeps caches:
  ``$XDG_CACHE_HOME/llm-compiler`` (``~/.cache/llm-compiler``), one folder per use.
* :func:`atomic_write_text` and :func:`atomic_write_bytes` write a file whole or not at
  all (a temporary file in the same folder, then a rename), so that a killed run never
  leaves a cache or a result file half written for the next run to trip on.
* :func:`write_jsonl`, :func:`write_parquet` and :func:`jsonl_to_parquet` write tables:
  JSONL always, Parquet when pyarrow is installed (``pip install 'llm-compiler[parquet]'``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llm_compiler.errors import LlmCompilerError


def cache_dir(*parts: str) -> Path:
    """The cache folder for ``parts`` (not created).

    Example:
        >>> cache_dir("passes").name
        'passes'
    """
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base.joinpath("llm-compiler", *parts)


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Writes ``data`` to ``path`` whole or not at all (parents are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
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
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        pq.write_table(table, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
