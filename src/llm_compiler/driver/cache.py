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
an entry is written in one transaction. It is bounded: past ``max_bytes`` the least
recently used entries are dropped. Counters of hits, misses and their seconds feed
``llm-compiler cc --stats``.

A store or an eviction costs the same in a full 1 GB store as in an empty one
(``docs/benchmarks.md``): an entry's small columns (key, size, last use, log record)
are a row of ``objects`` and its bytes a row of ``blobs``, so ordering by last use and
counting never read an object's pages; and the objects' total is kept in ``meta``,
updated by triggers on ``objects`` in the transaction of each insert, resize and delete
(a delete also drops the entry's bytes and its direct-hit rows), so no writer sums the
sizes, and a writer that deletes or updates rows, this module or another, keeps the
total right (a replaced entry must be an upsert, not ``INSERT OR REPLACE``, whose
implicit delete fires no trigger). The
file's layout is ``PRAGMA user_version`` (:data:`SCHEMA`): a store of an older layout
is emptied and made anew when first opened for writing (its keys are stale anyway,
:data:`FORMAT` changed with it); one of a newer layout is left alone and not used.

The cache never breaks a build. A store that cannot be opened for writing (a read-only
folder, a full disk) is used read-only when it can be, else not at all; an error while
reading or writing an entry disables the cache for the rest of the command. Either way
one line on stderr names the cause, and the unit is compiled as without a cache.

This module imports nothing heavy: a cache hit must not pay for loading the optimizer.
"""

from __future__ import annotations

import contextlib
import functools
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
from llm_compiler.driver.direct import (
    SOURCES_SCHEMA,
    STORE_NAME,
    default_cache_dir,
    file_digest,
    tool_identity,
)
from llm_compiler.errors import InvalidInput
from llm_compiler.files import enable_wal

__all__ = [
    "STORE_NAME",
    "ObjectCache",
    "default_cache_dir",
    "file_digest",
    "llvm_identity",
    "parse_size",
    "unit_key",
]

#: Bumped when what an entry holds, or what its key covers, changes (2: the LLVM tools'
#: files are part of the key).
FORMAT = 2

#: The store file's layout, kept as its ``PRAGMA user_version`` (0: the first layout, one
#: ``objects`` table with the object inside and no running total).
SCHEMA = 2

#: Default bound of the store's objects, in bytes.
DEFAULT_MAX_BYTES = 1 << 30

#: Seconds a driver waits for another one's write to end.
_BUSY_SECONDS = 60.0

_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]?)i?B?", re.IGNORECASE)

#: The store's tables, made in one transaction (:meth:`ObjectCache._connection`). The
#: triggers keep ``meta``'s ``bytes`` equal to ``sum(objects.size)`` whoever writes.
_TABLES = (
    """CREATE TABLE objects (
    key TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    used REAL NOT NULL,
    created REAL NOT NULL,
    record TEXT NOT NULL
)""",
    "CREATE INDEX objects_used ON objects (used)",
    "CREATE TABLE blobs (key TEXT PRIMARY KEY, object BLOB NOT NULL)",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT INTO meta VALUES ('bytes', 0)",
    """CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    seconds REAL NOT NULL
)""",
    """CREATE TABLE choices (
    key TEXT PRIMARY KEY,
    choice TEXT NOT NULL,
    created REAL NOT NULL
)""",
    SOURCES_SCHEMA.strip(),
    "CREATE INDEX sources_unit_key ON sources (unit_key)",
    """CREATE TRIGGER objects_inserted AFTER INSERT ON objects BEGIN
    UPDATE meta SET value = value + NEW.size WHERE name = 'bytes';
END""",
    """CREATE TRIGGER objects_resized AFTER UPDATE OF size ON objects BEGIN
    UPDATE meta SET value = value - OLD.size + NEW.size WHERE name = 'bytes';
END""",
    """CREATE TRIGGER objects_deleted AFTER DELETE ON objects BEGIN
    UPDATE meta SET value = value - OLD.size WHERE name = 'bytes';
    DELETE FROM blobs WHERE key = OLD.key;
    DELETE FROM sources WHERE unit_key = OLD.key;
END""",
)

#: What a store of an older layout holds (dropped with their indexes and triggers).
#: The counters stay: their layout has not changed, and they are the store's history.
_OLD_TABLES = ("objects", "blobs", "meta", "choices", "sources")


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
        llvm: The LLVM: its version, bin folder and tools' files (:func:`llvm_identity`).
        choosers: What the choosers know (:func:`llm_compiler.cli.cc.chooser_identity`).

    Example:
        >>> len(unit_key(b"x", language="c", codegen_flags=(), llvm="19", choosers=""))
        64
    """
    header = json.dumps([FORMAT, __version__, language, list(codegen_flags), llvm, choosers])
    return hashlib.sha256(header.encode() + b"\0" + ir).hexdigest()


def llvm_identity(llvm: str, tools: Sequence[Path]) -> str:
    """``llvm`` (version and folder) and the identity of the tools' files, for a unit key.

    An LLVM upgraded in place keeps its version and folder; its programs' files change.
    Each tool is named as direct hits name it (:func:`~llm_compiler.driver.direct.tool_identity`:
    the file it resolves to, its size and modification time); a tool that is missing
    counts as missing. Worked out once per process for each toolchain, since every
    compile command needs it.

    Example:
        >>> llvm_identity("19.1.7 (/nowhere)", [Path("/nowhere/opt")])
        '19.1.7 (/nowhere); [["/nowhere/opt", null, null]]'
    """
    return f"{llvm}; {_tools_text(tuple(tools))}"


@functools.lru_cache(maxsize=16)
def _tools_text(tools: tuple[Path, ...]) -> str:
    identities = []
    for tool in tools:
        try:
            identities.append(tool_identity(tool))
        except OSError:
            identities.append([str(tool), None, None])
    return json.dumps(identities)


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
            enable_wal(db)  # waits for another compile of the build switching a new store
            db.execute("PRAGMA synchronous=NORMAL")
            try:
                if _layout(db) != SCHEMA:
                    with _transaction(db):  # one driver lays it out; the others find it done
                        _lay_out(db, self.path)
            except BaseException:
                db.close()
                raise
            self._db = db
            return db
        except _NewerLayout as error:
            self._warn(str(error))
            return None
        except (sqlite3.Error, OSError) as error:
            reason = error
        if self.path.is_file():
            try:  # a read-only folder or a full disk: its entries still serve
                db = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True)
                if _layout(db) == SCHEMA:  # (one of another layout has no entry to serve)
                    db.execute("SELECT count(*) FROM objects").fetchone()
                    self._db, self.read_only = db, True
                    self._warn(
                        f"the cache {self.path} cannot be written ({reason}); it is only read this time."
                    )
                    return db
                db.close()
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
            row = db.execute(
                "SELECT blobs.object, objects.record FROM objects JOIN blobs USING (key) WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None:
                return None
            if not self.read_only:
                db.execute("UPDATE objects SET used = ? WHERE key = ?", (time.time(), key))
            return Entry(bytes(row[0]), json.loads(row[1]))
        except (sqlite3.Error, ValueError) as error:
            self._disable(error)
            return None

    def put(self, key: str, obj: bytes, record: Mapping[str, Any]) -> None:
        """Stores ``obj`` under ``key`` (one transaction), then keeps the store within its
        bound; an object larger than the bound is not stored."""
        db = self._connection()
        if db is None or self.read_only or len(obj) > self.max_bytes:
            return
        now = time.time()
        try:
            with _transaction(db):
                db.execute(
                    "INSERT INTO objects VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                    "size = excluded.size, used = excluded.used, created = excluded.created, "
                    "record = excluded.record",
                    (key, len(obj), now, now, json.dumps(dict(record))),
                )
                db.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, obj))
                _count(db, "stored", 0.0)
                total = _total(db)
                if total > self.max_bytes:
                    _evict(db, total, self.max_bytes)
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
                layout = _layout(db)
                if layout == SCHEMA:
                    entries, size = db.execute("SELECT count(*) FROM objects").fetchone()[0], _total(db)
                elif layout > SCHEMA:
                    raise _NewerLayout(self.path, layout)
                else:  # the first layout, made anew at the next build: what it holds now
                    query = "SELECT count(*), coalesce(sum(size), 0) FROM objects"
                    entries, size = db.execute(query).fetchone() if _has_objects(db) else (0, 0)
                counters = {name: (n, s) for name, n, s in db.execute("SELECT * FROM counters")}
            finally:
                db.close()
        except _NewerLayout as error:
            raise InvalidInput(str(error)) from error
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


class _NewerLayout(sqlite3.DatabaseError):
    """The store was laid out by a newer llm-compiler: it is not used, nor emptied."""

    def __init__(self, path: Path, layout: int) -> None:
        super().__init__(
            f"the cache {path} was written by a newer llm-compiler (layout {layout}, this one reads "
            f"{SCHEMA}); building without it. Give another folder with --cache, or upgrade."
        )


def _layout(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _has_objects(db: sqlite3.Connection) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'objects'")
    return found.fetchone() is not None


def _lay_out(db: sqlite3.Connection, path: Path) -> None:
    """Makes the tables of :data:`SCHEMA` in the store ``path`` (inside a transaction):
    nothing when another driver made them first, a new store's tables, or an older
    store's emptied and made anew (its entries' keys cannot be asked for any more; the
    pages they free are reused by the entries that follow).

    Raises:
        _NewerLayout: A newer llm-compiler laid the store out.
    """
    layout = _layout(db)
    if layout == SCHEMA:
        return
    if layout > SCHEMA:
        raise _NewerLayout(path, layout)
    for table in _OLD_TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _TABLES:
        db.execute(statement)
    db.execute(f"PRAGMA user_version = {SCHEMA}")


def _total(db: sqlite3.Connection) -> int:
    """The objects' bytes, as the triggers keep them."""
    return int(db.execute("SELECT value FROM meta WHERE name = 'bytes'").fetchone()[0])


def _evict(db: sqlite3.Connection, total: int, bound: int) -> None:
    """Drops least recently used entries until the objects' bytes are at most ``bound``
    (the triggers drop their bytes and direct-hit rows, and lower the total)."""
    evicted = 0
    while total > bound:
        oldest = db.execute("SELECT key, size FROM objects ORDER BY used LIMIT 8").fetchall()
        if not oldest:
            break
        for key, size in oldest:
            if total <= bound:
                break
            db.execute("DELETE FROM objects WHERE key = ?", (key,))
            total -= size
            evicted += 1
    if evicted:
        db.execute(
            "INSERT INTO counters VALUES ('evicted', ?, 0) "
            "ON CONFLICT(name) DO UPDATE SET count = count + excluded.count",
            (evicted,),
        )
