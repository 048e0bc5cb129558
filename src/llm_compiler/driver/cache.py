"""The driver's object cache: a rebuild of an unchanged unit costs a front end, not a search.

``llm-compiler cc`` spends most of a unit's time choosing its pass list (measuring the
predictor's candidates, validating the one kept). What it finally writes depends only
on the unit's unoptimized IR, the flags that lower it, the language, the LLVM, and
what the choosers know (the predictor spec and ranker files, the tuned results, the
objective). :class:`ObjectCache` keeps each written object under a key made of all of
these (:func:`unit_key`), so a unit compiled again with nothing of it changed is
answered with the same bytes after the front end alone.

The store is one SQLite file (WAL mode, a generous busy timeout) shared by every driver
process of a build, so ``make -j`` writes to it at once without lost or torn entries:
an entry is one row written in one transaction. It is bounded: past ``max_bytes`` the
least recently used entries are dropped. Counters of hits, misses and their seconds
feed ``llm-compiler cc --stats``.

The cache never breaks a build. A store that cannot be opened for writing (a read-only
folder, a full disk) is used read-only when it can be, else not at all; an error while
reading or writing an entry disables the cache for the rest of the command. Either way
one line on stderr names the cause, and the unit is compiled as without a cache.

This module imports nothing heavy: a cache hit must not pay for loading the optimizer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler import __version__
from llm_compiler.driver.direct import SOURCES_SCHEMA, STORE_NAME, default_cache_dir, file_digest
from llm_compiler.errors import InvalidInput

__all__ = ["STORE_NAME", "ObjectCache", "default_cache_dir", "file_digest", "parse_size", "unit_key"]

#: Bumped when what an entry holds, or what its key covers, changes.
FORMAT = 1

#: Default bound of the store's objects, in bytes.
DEFAULT_MAX_BYTES = 1 << 30

#: Eviction brings the store down to this share of its bound, so it does not run on every store.
_EVICT_TO = 0.9

#: Seconds a driver waits for another one's write to end.
_BUSY_SECONDS = 60.0

_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]?)i?B?", re.IGNORECASE)

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY,
    object BLOB NOT NULL,
    size INTEGER NOT NULL,
    record TEXT NOT NULL,
    created REAL NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS objects_used ON objects (used);
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    seconds REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS choices (
    key TEXT PRIMARY KEY,
    choice TEXT NOT NULL,
    created REAL NOT NULL
);
"""
    + SOURCES_SCHEMA
)


def parse_size(text: str) -> int:
    """A size such as ``500M``, ``2G`` or ``1048576`` in bytes (K, M, G are powers of 1024).

    Raises:
        InvalidInput: ``text`` is not a size.

    Example:
        >>> parse_size("2G"), parse_size("1.5K"), parse_size("100")
        (2147483648, 1536, 100)
    """
    match = _SIZE_RE.fullmatch(text.strip())
    if not match:
        raise InvalidInput(f"{text!r} is not a size: give bytes, or a number with K, M or G (500M, 2G).")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def unit_key(ir: bytes, *, language: str, codegen_flags: Sequence[str], llvm: str, choosers: str) -> str:
    """The key of one unit's object: everything the object written depends on.

    Args:
        ir: The unit's unoptimized IR as the front end wrote it.
        language: ``c`` or ``c++`` (which clang lowers it).
        codegen_flags: The build's flags used when lowering (``-fPIC``, ``-g``...).
        llvm: The LLVM version and bin folder.
        choosers: What the choosers know (:func:`llm_compiler.cli.cc.chooser_identity`).

    Example:
        >>> len(unit_key(b"x", language="c", codegen_flags=(), llvm="19", choosers=""))
        64
    """
    header = json.dumps([FORMAT, __version__, language, list(codegen_flags), llvm, choosers])
    return hashlib.sha256(header.encode() + b"\0" + ir).hexdigest()


@dataclass(frozen=True)
class Entry:
    """A cached object and the log record of the compile that made it."""

    object: bytes
    record: dict[str, Any]


@dataclass(frozen=True)
class CacheStats:
    """What ``llm-compiler cc --stats`` prints (see :meth:`ObjectCache.stats`)."""

    path: Path
    entries: int
    bytes: int
    max_bytes: int
    counters: Mapping[str, tuple[int, float]]

    def text(self) -> str:
        hits, hit_seconds = self.counters.get("hit", (0, 0.0))
        misses, miss_seconds = self.counters.get("miss", (0, 0.0))
        lines = [
            f"cache: {self.path}",
            f"entries: {self.entries:,}, {self.bytes:,} bytes of objects (bound {self.max_bytes:,})",
            f"hits: {hits:,}" + (f", {hit_seconds / hits:.3f} s per unit" if hits else ""),
            f"misses: {misses:,}" + (f", {miss_seconds / misses:.3f} s per unit" if misses else ""),
        ]
        if hits + misses:
            lines.append(f"hit rate: {hits / (hits + misses):.1%}")
        if "direct" in self.counters:
            lines.append(f"  of which direct (no front end): {self.counters['direct'][0]:,}")
        for name in ("stored", "evicted", "error"):
            if name in self.counters:
                lines.append(f"{name}: {self.counters[name][0]:,}")
        return "\n".join(lines)


class ObjectCache:
    """The store of objects by unit key (module docstring).

    Args:
        directory: The cache folder (made if missing).
        max_bytes: Bound of the objects' bytes; least recently used entries go first.
        warn: Where the one line about an unusable cache goes (stderr by default).
    """

    def __init__(self, directory: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, warn: Any = None) -> None:
        self.directory = Path(directory)
        self.path = self.directory / STORE_NAME
        self.max_bytes = max_bytes
        self.read_only = False
        self._warn = warn or (lambda text: sys.stderr.write(f"llm-compiler cc: {text}\n"))
        self._db: sqlite3.Connection | None = None
        self._opened = False

    # Opening -------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection | None:
        if self._opened:
            return self._db
        self._opened = True
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            self._db = db
            return db
        except (sqlite3.Error, OSError) as error:
            reason = error
        if self.path.is_file():
            try:  # a read-only folder or a full disk: its entries still serve
                db = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True)
                db.execute("SELECT count(*) FROM objects").fetchone()
                self._db, self.read_only = db, True
                self._warn(f"the cache {self.path} cannot be written ({reason}); it is only read this time.")
                return db
            except sqlite3.Error:
                pass
        self._warn(f"the cache {self.directory} is not usable ({reason}); building without it.")
        return None

    def _disable(self, error: BaseException) -> None:
        self._warn(f"the cache {self.path} failed ({error}); building without it from here.")
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # Entries -------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        """The entry of ``key``, or None (also when the cache is not usable)."""
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT object, record FROM objects WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            if not self.read_only:
                db.execute("UPDATE objects SET used = ? WHERE key = ?", (time.time(), key))
            return Entry(bytes(row[0]), json.loads(row[1]))
        except (sqlite3.Error, ValueError) as error:
            self._disable(error)
            return None

    def put(self, key: str, obj: bytes, record: Mapping[str, Any]) -> None:
        """Stores ``obj`` under ``key`` (one transaction), then keeps the store within its bound."""
        db = self._connection()
        if db is None or self.read_only:
            return
        now = time.time()
        try:
            with _transaction(db):
                db.execute(
                    "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                    (key, obj, len(obj), json.dumps(dict(record)), now, now),
                )
                _count(db, "stored", 0.0)
                total = db.execute("SELECT coalesce(sum(size), 0) FROM objects").fetchone()[0]
                if total > self.max_bytes:
                    _evict(db, total, int(self.max_bytes * _EVICT_TO))
        except sqlite3.Error as error:
            self._disable(error)

    def remember(self, source_key: str, key: str, entry: Mapping[str, Any]) -> None:
        """Stores what a compile command read and gave (:mod:`llm_compiler.driver.direct`)."""
        db = self._connection()
        if db is None or self.read_only:
            return
        try:
            db.execute(
                "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)",
                (source_key, key, json.dumps(dict(entry)), time.time()),
            )
        except sqlite3.Error as error:
            self._disable(error)

    def choice(self, key: str) -> dict[str, Any] | None:
        """The choice stored under ``key`` (:meth:`remember_choice`), or None."""
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT choice FROM choices WHERE key = ?", (key,)).fetchone()
            return None if row is None else dict(json.loads(row[0]))
        except (sqlite3.Error, ValueError, TypeError) as error:
            self._disable(error)
            return None

    def remember_choice(self, key: str, choice: Mapping[str, Any]) -> None:
        """Stores a unit's choice by its IR (a row of a few hundred bytes, kept outside the
        objects' bound)."""
        db = self._connection()
        if db is None or self.read_only:
            return
        try:
            db.execute(
                "INSERT OR REPLACE INTO choices VALUES (?, ?, ?)",
                (key, json.dumps(dict(choice)), time.time()),
            )
        except sqlite3.Error as error:
            self._disable(error)

    def count(self, name: str, seconds: float) -> None:
        """Adds one to counter ``name`` (``hit``, ``miss``...) and ``seconds`` to its time."""
        db = self._connection()
        if db is None or self.read_only:
            return
        try:
            _count(db, name, seconds)
        except sqlite3.Error as error:
            self._disable(error)

    def stats(self) -> CacheStats:
        """The store's entries, bytes and counters.

        Raises:
            InvalidInput: There is no usable store in the folder.
        """
        if not self.path.is_file():
            raise InvalidInput(f"{self.path}: no cache yet (a build with `llm-compiler cc` makes it).")
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=_BUSY_SECONDS)
            try:
                entries, size = db.execute("SELECT count(*), coalesce(sum(size), 0) FROM objects").fetchone()
                counters = {name: (n, s) for name, n, s in db.execute("SELECT * FROM counters")}
            finally:
                db.close()
        except sqlite3.Error as error:
            raise InvalidInput(
                f"{self.path}: cannot read the cache ({error}); delete the folder to start a new one."
            ) from error
        return CacheStats(self.path, int(entries), int(size), self.max_bytes, counters)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on an error): the write lock is taken
    first, so two drivers never both read the total and then both write."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        else:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")


def _count(db: sqlite3.Connection, name: str, seconds: float) -> None:
    db.execute(
        "INSERT INTO counters VALUES (?, 1, ?) "
        "ON CONFLICT(name) DO UPDATE SET count = count + 1, seconds = seconds + excluded.seconds",
        (name, seconds),
    )


def _evict(db: sqlite3.Connection, total: int, target: int) -> None:
    """Drops least recently used entries until the objects' bytes are at most ``target``."""
    evicted = 0
    for key, size in db.execute("SELECT key, size FROM objects ORDER BY used").fetchall():
        if total <= target:
            break
        db.execute("DELETE FROM objects WHERE key = ?", (key,))
        total -= size
        evicted += 1
    if evicted:
        db.execute("DELETE FROM sources WHERE unit_key NOT IN (SELECT key FROM objects)")
        db.execute(
            "INSERT INTO counters VALUES ('evicted', ?, 0) "
            "ON CONFLICT(name) DO UPDATE SET count = count + excluded.count",
            (evicted,),
        )
