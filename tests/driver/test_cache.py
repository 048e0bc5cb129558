"""The driver's object cache with the real clang, make and SQLite: fast rebuilds that give
the same bytes, safe under ``make -j``, and builds that survive kill -9, a full disk and a
read-only cache."""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.driver import cache as cache_module
from llm_compiler.driver.cache import ObjectCache, file_digest, parse_size, unit_key
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import OzOnly
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain

SOURCES = {
    "text.c": """\
#include <string.h>
#include "project.h"
int count_words(const char *text) {
    int words = 0, inside = 0;
    for (; *text; text++) {
        int space = *text == ' ' || *text == '\\n' || *text == '\\t';
        if (!space && !inside) words++;
        inside = !space;
    }
    return words;
}
void reverse(char *text) {
    size_t n = strlen(text);
    for (size_t i = 0; i < n / 2; i++) { char c = text[i]; text[i] = text[n - 1 - i]; text[n - 1 - i] = c; }
}
""",
    "table.c": """\
#include <stdlib.h>
#include <string.h>
#include "project.h"
struct entry { char key[16]; int value; struct entry *next; };
static struct entry *buckets[64];
static unsigned hash(const char *key) {
    unsigned h = 5381;
    while (*key) h = h * 33 + (unsigned char)*key++;
    return h;
}
void table_put(const char *key, int value) {
    unsigned b = hash(key) % 64;
    for (struct entry *e = buckets[b]; e; e = e->next)
        if (!strcmp(e->key, key)) { e->value = value; return; }
    struct entry *e = calloc(1, sizeof *e);
    strncpy(e->key, key, sizeof e->key - 1);
    e->value = value; e->next = buckets[b]; buckets[b] = e;
}
int table_get(const char *key, int missing) {
    for (struct entry *e = buckets[hash(key) % 64]; e; e = e->next)
        if (!strcmp(e->key, key)) return e->value;
    return missing;
}
""",
    "sort.c": """\
#include "project.h"
static void sift(int *a, int start, int end) {
    int root = start;
    while (2 * root + 1 <= end) {
        int child = 2 * root + 1, swap = root;
        if (a[swap] < a[child]) swap = child;
        if (child + 1 <= end && a[swap] < a[child + 1]) swap = child + 1;
        if (swap == root) return;
        int t = a[root]; a[root] = a[swap]; a[swap] = t; root = swap;
    }
}
void heap_sort(int *a, int n) {
    for (int start = (n - 2) / 2; start >= 0; start--) sift(a, start, n - 1);
    for (int end = n - 1; end > 0; end--) { int t = a[end]; a[end] = a[0]; a[0] = t; sift(a, 0, end - 1); }
}
long checksum(const int *a, int n) { long s = 0; for (int i = 0; i < n; i++) s = s * 31 + a[i]; return s; }
""",
    "main.c": """\
#include <stdio.h>
#include <string.h>
#include "project.h"
int main(void) {
    int values[] = {9, 3, 7, 1, 8, 2, 6, 4, 5, 0};
    heap_sort(values, 10);
    char text[] = "the quick brown fox";
    reverse(text);
    table_put("fox", count_words("the quick brown fox"));
    printf("%ld %s %d\\n", checksum(values, 10), text, table_get("fox", -1));
    return 0;
}
""",
    "check.c": """\
#include <stdio.h>
#include <string.h>
#include "project.h"
int main(void) {
    int failures = 0;
    int a[] = {5, -1, 3, 3, 0};
    heap_sort(a, 5);
    failures += !(a[0] == -1 && a[1] == 0 && a[2] == 3 && a[3] == 3 && a[4] == 5);
    char text[] = "abc";
    reverse(text);
    failures += strcmp(text, "cba") != 0;
    failures += count_words("  two  words ") != 2;
    table_put("a", 1); table_put("a", 2);
    failures += table_get("a", 0) != 2 || table_get("b", 7) != 7;
    printf("%d failures\\n", failures);
    return failures != 0;
}
""",
    "project.h": """\
int count_words(const char *text);
void reverse(char *text);
void table_put(const char *key, int value);
int table_get(const char *key, int missing);
void heap_sort(int *a, int n);
long checksum(const int *a, int n);
""",
}

MAKEFILE = """\
LIBOBJS = text.o table.o sort.o
all: demo check
demo: main.o $(LIBOBJS)
\t$(CC) -o $@ main.o $(LIBOBJS)
check: check.o $(LIBOBJS)
\t$(CC) -o $@ check.o $(LIBOBJS)
%.o: %.c project.h
\t$(CC) -O2 -c $< -o $@
test: all
\t./check
clean:
\trm -f *.o demo check
"""

OUTPUTS = ("main.o", "check.o", "text.o", "table.o", "sort.o", "demo", "check")
UNITS = 5


def write_project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in SOURCES.items():
        (folder / name).write_text(text)
    (folder / "Makefile").write_text(MAKEFILE)
    return folder


#: The builds' chooser: the built-in predictor's first three lists (not the default ten),
#: each unit still measured and validated; what is tested here is the cache, not the
#: predictor's choices, and fewer candidates mean fewer lists to validate.
PREDICTOR = "builtin:k=3"


def driver(cache: Path, *options: str, predictor: str = PREDICTOR) -> str:
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", str(cache), "--predictor", predictor]
    return " ".join([*command, *options])


def make(
    folder: Path, *targets: str, cc: str, jobs: int = 1, **popen: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", f"-j{jobs}", f"CC={cc}", *targets],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        **popen,
    )


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in OUTPUTS}


def stats(cache: Path) -> dict[str, str]:
    shown = subprocess.run(
        [sys.executable, "-m", "llm_compiler", "cc", "--cache", str(cache), "--stats"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return dict(line.split(": ", 1) for line in shown.splitlines())


def counted(shown: dict[str, str], name: str) -> int:
    return int(shown[name].split(",")[0].replace(",", ""))


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def intact(cache: Path) -> int:
    """The entries of a store that passes SQLite's integrity check."""
    with sqlite3.connect(cache / "objects.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return int(db.execute("SELECT count(*) FROM objects").fetchone()[0])


def stored_so_far(cache: Path) -> int:
    """The entries of a store being written by a build: 0 before its table is made."""
    if not (cache / "objects.sqlite").exists():
        return 0
    try:
        return intact(cache)
    except sqlite3.OperationalError:  # created, its table not yet (or locked): look again
        return 0


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The project built at -j1 with an empty cache: the bytes every other build must give."""
    folder = write_project(tmp_path_factory.mktemp("reference"))
    built = make(folder, "test", cc=driver(folder / "cache"))
    assert built.returncode == 0, built.stderr
    assert "0 failures" in built.stdout
    return outputs(folder)


def test_keys_cover_what_the_object_depends_on(tmp_path: Path) -> None:
    base = {
        "language": "c",
        "codegen_flags": ["-fPIC"],
        "llvm": "19.1.7 (/usr/lib/llvm-19/bin)",
        "choosers": "a",
    }
    key = unit_key(b"ir", **base)  # type: ignore[arg-type]
    assert key == unit_key(b"ir", **base)  # type: ignore[arg-type]
    changed = [
        unit_key(b"ir2", **base),  # type: ignore[arg-type]
        unit_key(b"ir", **{**base, "language": "c++"}),  # type: ignore[arg-type]
        unit_key(b"ir", **{**base, "codegen_flags": []}),  # type: ignore[arg-type]
        unit_key(b"ir", **{**base, "llvm": "22.1.8 (/usr/lib/llvm-22/bin)"}),  # type: ignore[arg-type]
        unit_key(b"ir", **{**base, "choosers": "b"}),  # type: ignore[arg-type]
    ]
    assert len({key, *changed}) == 6
    ranker = tmp_path / "ranker.json"
    ranker.write_text("{}")
    before = file_digest([ranker])
    ranker.write_text('{"new": 1}')
    assert file_digest([ranker]) != before
    assert parse_size("500M") == 500 << 20 and parse_size("2G") == 2 << 30 and parse_size("4096") == 4096
    with pytest.raises(InvalidInput, match="not a size"):
        parse_size("lots")


def test_the_store_keeps_within_its_bound_dropping_the_least_recently_used(tmp_path: Path) -> None:
    warnings: list[str] = []
    cache = ObjectCache(tmp_path / "cache", max_bytes=10_000, warn=warnings.append)
    for number in range(5):
        cache.put(f"key{number}", bytes([number]) * 1000, {"kept": "oz"})
        time.sleep(0.01)
    assert cache.get("key0") is not None  # used again: now the most recent
    for number in range(5, 12):  # the 11th and 12th entries pass the bound: one out each
        cache.put(f"key{number}", bytes([number]) * 1000, {"kept": "oz"})
        time.sleep(0.01)
    shown = cache.stats()
    assert shown.entries == 10 and shown.bytes == 10_000
    entry = cache.get("key0")
    assert entry is not None and entry.object == bytes(1000) and entry.record == {"kept": "oz"}
    assert cache.get("key1") is None and cache.get("key2") is None
    assert all(cache.get(f"key{number}") is not None for number in range(3, 12))
    assert shown.counters["evicted"][0] == 2 and shown.counters["stored"][0] == 12 and not warnings
    cache.put("huge", bytes(10_001), {"kept": "oz"})  # larger than the bound: not stored, nothing lost
    assert cache.get("huge") is None and cache.stats().entries == 10
    cache.close()


def totals(store: Path) -> tuple[int, int, int, int]:
    """The running total, the sum of the entries' sizes, the entries, and the entries whose
    bytes are there and as long as their size says."""
    with contextlib.closing(sqlite3.connect(store / "objects.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (total,) = db.execute("SELECT value FROM meta WHERE name = 'bytes'").fetchone()
        summed, entries = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM objects").fetchone()
        query = "SELECT count(*) FROM objects JOIN blobs USING (key) WHERE length(object) = size"
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == entries  # no bytes left behind
        return int(total), int(summed), int(entries), int(db.execute(query).fetchone()[0])


def test_the_running_total_follows_puts_replaces_and_evictions(tmp_path: Path) -> None:
    rng = random.Random(7)
    cache = ObjectCache(tmp_path / "cache", max_bytes=50_000)
    for number in range(120):
        key = f"key{rng.randrange(40)}"  # about two puts in three replace an entry
        cache.put(key, rng.randbytes(rng.randrange(100, 6000)), {"number": number})
        total, summed, entries, whole = totals(tmp_path / "cache")
        assert total == summed <= 50_000 and whole == entries
    shown = cache.stats()
    assert shown.bytes == summed and shown.entries == entries and shown.counters["evicted"][0] > 0
    with contextlib.closing(sqlite3.connect(tmp_path / "cache" / "objects.sqlite")) as db:
        db.execute("DELETE FROM objects WHERE key IN (SELECT key FROM objects LIMIT 3)")  # another writer
        db.commit()
    total, summed, entries, whole = totals(tmp_path / "cache")
    assert total == summed and whole == entries == shown.entries - 3
    cache.close()


#: One of two processes storing into one cache at once, after both are ready.
_PUTTER = """
import sys, time
from pathlib import Path
from llm_compiler.driver.cache import ObjectCache
folder, name, start = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
cache = ObjectCache(folder, max_bytes=100_000, warn=lambda text: sys.exit(text))
while not start.exists():
    time.sleep(0.001)
for number in range(150):
    key = f"shared{number % 20}" if number % 3 == 0 else f"{name}{number}"
    cache.put(key, bytes([number % 256]) * (500 + 37 * number), {"by": name})
    cache.get(f"shared{number % 20}")
"""


def test_two_processes_storing_at_once_keep_the_total_and_the_bound(tmp_path: Path) -> None:
    store, start = tmp_path / "cache", tmp_path / "start"
    putters = [
        subprocess.Popen(
            [sys.executable, "-c", _PUTTER, str(store), name, str(start)], stderr=subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    time.sleep(1.0)  # both started and waiting
    start.write_text("")
    errors = [putter.communicate(timeout=300)[1] for putter in putters]
    assert [putter.returncode for putter in putters] == [0, 0], errors
    total, summed, entries, whole = totals(store)
    assert total == summed <= 100_000 and whole == entries > 0
    assert ObjectCache(store).stats().counters["stored"][0] == 300


def _steps_of_a_put(cache: ObjectCache, key: str) -> int:
    """The SQLite virtual-machine steps of one store (its work, whatever the machine's load)."""
    db = cache._connection()
    assert db is not None
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    db.set_progress_handler(step, 1)
    try:
        cache.put(key, bytes(1000), {"kept": "oz"})
    finally:
        db.set_progress_handler(None, 1)
    return steps[0]


def test_a_store_at_the_bound_costs_the_same_in_a_big_store_as_in_a_small_one(tmp_path: Path) -> None:
    costs = []
    for entries in (50, 1000):
        cache = ObjectCache(tmp_path / f"cache{entries}", max_bytes=entries * 1000)
        for number in range(entries):
            cache.put(f"key{number}", bytes(1000), {"kept": "oz"})
        costs.append(max(_steps_of_a_put(cache, f"new{number}") for number in range(5)))
        assert cache.stats().bytes <= entries * 1000
        cache.close()
    assert costs[1] < costs[0] * 1.5, f"a store among 1000 entries took {costs[1]} steps, among 50 {costs[0]}"


#: The first layout of the store (before ``PRAGMA user_version`` 2): objects inside their rows.
FIRST_LAYOUT = """
CREATE TABLE objects (key TEXT PRIMARY KEY, object BLOB NOT NULL, size INTEGER NOT NULL,
    record TEXT NOT NULL, created REAL NOT NULL, used REAL NOT NULL);
CREATE INDEX objects_used ON objects (used);
CREATE TABLE counters (name TEXT PRIMARY KEY, count INTEGER NOT NULL, seconds REAL NOT NULL);
CREATE TABLE choices (key TEXT PRIMARY KEY, choice TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE sources (key TEXT PRIMARY KEY, unit_key TEXT NOT NULL, entry TEXT NOT NULL,
    created REAL NOT NULL);
INSERT INTO objects VALUES ('old0', zeroblob(2000), 2000, '{}', 1, 1),
    ('old1', zeroblob(2000), 2000, '{}', 2, 2), ('old2', zeroblob(2000), 2000, '{}', 3, 3);
INSERT INTO counters VALUES ('hit', 4, 1.0);
INSERT INTO choices VALUES ('old0', '{}', 1);
INSERT INTO sources VALUES ('command', 'old0', '{}', 1);
"""


def test_a_store_of_the_first_layout_is_made_anew_and_a_newer_one_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    with contextlib.closing(sqlite3.connect(folder / "objects.sqlite")) as db:
        db.executescript(FIRST_LAYOUT)
    shown = ObjectCache(folder).stats()  # read as it is, not changed
    assert (shown.entries, shown.bytes, shown.counters["hit"]) == (3, 6000, (4, 1.0))
    warnings: list[str] = []
    cache = ObjectCache(folder, max_bytes=10_000, warn=warnings.append)
    assert cache.get("old0") is None  # its keys are stale: its entries are gone
    cache.put("new", b"n" * 3000, {"kept": "oz"})
    entry = cache.get("new")
    assert entry is not None and entry.object == b"n" * 3000 and not warnings
    shown = cache.stats()
    assert (shown.entries, shown.bytes, shown.counters["hit"]) == (1, 3000, (4, 1.0))
    assert totals(folder) == (3000, 3000, 1, 1)
    cache.close()
    with contextlib.closing(sqlite3.connect(folder / "objects.sqlite")) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (cache_module.SCHEMA,)
        assert db.execute("SELECT count(*) FROM sources").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM choices").fetchone() == (0,)
        db.execute(f"PRAGMA user_version = {cache_module.SCHEMA + 1}")  # a newer llm-compiler's
    before = (folder / "objects.sqlite").read_bytes()
    newer = ObjectCache(folder, warn=warnings.append)
    assert newer.get("new") is None and newer.choice("new") is None
    newer.put("other", b"o" * 10, {"kept": "oz"})
    assert len(warnings) == 1 and "newer llm-compiler" in warnings[0]
    assert (folder / "objects.sqlite").read_bytes() == before
    with pytest.raises(InvalidInput, match="newer llm-compiler"):
        newer.stats()


def as_in_a_new_process() -> None:
    """Forgets the tools' identities worked out so far, as a new driver process would not know them."""
    forget = getattr(cache_module, "_tools_text", None)
    if forget is not None:  # (the identity was not worked out before 2: nothing to forget)
        forget.cache_clear()


def test_an_llvm_changed_in_place_changes_the_keys_and_not_the_log(tmp_path: Path) -> None:
    bin_dir = tmp_path / "llvm" / "bin"
    bin_dir.mkdir(parents=True)
    real = find_toolchain()
    for name in ("clang", "opt", "llc"):
        shutil.copy2(real.tool(name), bin_dir / name)
    toolchain = Toolchain(bin_dir, real.version)
    driver = Driver("c", OzOnly(), toolchain=toolchain, cache=ObjectCache(tmp_path / "cache"))
    as_in_a_new_process()
    key = driver._key(["-fPIC"], b"ir")
    assert key == driver._key(["-fPIC"], b"ir")
    assert driver._new_log().llvm == f"{real.version} ({bin_dir})"  # the log names the LLVM for people
    keys = {key}
    for name in ("opt", "llc", "clang"):  # each tool upgraded in place, the version the same
        modified = (bin_dir / name).stat().st_mtime_ns + 1_000_000_000
        os.utime(bin_dir / name, ns=(modified, modified))
        assert driver._key(["-fPIC"], b"ir") == key  # worked out once per process
        as_in_a_new_process()
        key = driver._key(["-fPIC"], b"ir")
        keys.add(key)
    with open(bin_dir / "llc", "ab") as tool:  # same time, other bytes
        tool.write(b"\0")
    os.utime(bin_dir / "llc", ns=(modified, modified))
    as_in_a_new_process()
    keys.add(driver._key(["-fPIC"], b"ir"))
    assert len(keys) == 5 and driver._new_log().llvm == f"{real.version} ({bin_dir})"


def test_a_rebuild_of_unchanged_sources_is_all_hits_and_byte_identical(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    folder = write_project(tmp_path / "project")
    cache, log = tmp_path / "cache", tmp_path / "cc.jsonl"
    assert make(folder, "all", cc=driver(cache, "--log", str(log))).returncode == 0
    assert outputs(folder) == reference
    assert make(folder, "clean", cc="cc").returncode == 0
    rebuilt = make(folder, "test", cc=driver(cache, "--log", str(log)))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert outputs(folder) == reference
    first, second = log_lines(log)[:UNITS], log_lines(log)[UNITS:]
    assert not any(line["cached"] for line in first) and all(line["cached"] for line in second)
    assert {line["source"]: line["size"] for line in first} == {
        line["source"]: line["size"] for line in second
    }
    shown = stats(cache)
    assert shown["entries"].startswith(f"{UNITS}, ") and shown["hits"].startswith(f"{UNITS}, ")
    assert shown["misses"].startswith(f"{UNITS}, ") and shown["hit rate"] == "50.0%"
    # Another predictor is another key: nothing of the first build's answers is reused.
    assert make(folder, "clean", cc="cc").returncode == 0
    other = make(folder, "all", cc=driver(cache, "--log", str(log), predictor="none"))
    assert other.returncode == 0 and not any(line["cached"] for line in log_lines(log)[2 * UNITS :])


def test_parallel_builds_give_the_bytes_of_a_serial_build_and_share_one_cache(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    for jobs in (2, 8):
        folder = write_project(tmp_path / f"j{jobs}")
        built = make(folder, "test", cc=driver(tmp_path / f"cache{jobs}"), jobs=jobs)
        assert built.returncode == 0, built.stderr
        assert outputs(folder) == reference, f"make -j{jobs}"
    # Eight builds at once into one cache: no entry lost or torn, every unit stored once.
    shared = tmp_path / "shared"
    folders = [write_project(tmp_path / f"copy{number}") for number in range(8)]
    builds = [
        subprocess.Popen(["make", f"CC={driver(shared)}", "all"], cwd=folder, stdout=subprocess.DEVNULL)
        for folder in folders
    ]
    assert [build.wait(timeout=600) for build in builds] == [0] * 8
    assert all(outputs(folder) == reference for folder in folders)
    assert intact(shared) == UNITS
    shown = stats(shared)
    assert counted(shown, "hits") + counted(shown, "misses") == 8 * UNITS


def test_a_read_only_cache_serves_its_entries_and_the_build_goes_on(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    folder = write_project(tmp_path / "project")
    cache, log = tmp_path / "cache", tmp_path / "cc.jsonl"
    assert make(folder, "all", cc=driver(cache)).returncode == 0
    assert make(folder, "clean", cc="cc").returncode == 0
    command = ["make", f"CC={driver(cache, '--log', str(log))}", "test"]
    if os.geteuid() == 0:  # root writes through file modes: mount the cache read-only instead
        script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", script, "sh", str(cache), *command]
    else:
        cache.chmod(0o555)
        (cache / "objects.sqlite").chmod(0o444)
    try:
        built = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600, check=False)
    finally:
        cache.chmod(0o755)
    assert built.returncode == 0, built.stderr
    assert outputs(folder) == reference
    assert "cannot be written" in built.stderr and "only read" in built.stderr
    assert all(line["cached"] for line in log_lines(log))
    # A cache folder that cannot even be made: built without a cache, one line says so.
    (tmp_path / "file").write_text("")
    assert make(folder, "clean", cc="cc").returncode == 0
    unusable = make(folder, "all", cc=driver(tmp_path / "file" / "cache"))
    assert unusable.returncode == 0 and outputs(folder) == reference
    assert unusable.stderr.count("is not usable") == UNITS


def _small_files() -> None:
    # Past 96 KiB a write fails (EFBIG) instead of killing the process: a disk that fills up
    # once the empty store (about 64 KiB of tables, indexes and triggers) and an entry or two
    # are written.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (96 * 1024, 96 * 1024))


def test_a_full_disk_leaves_a_correct_build_and_a_usable_cache(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    folder = write_project(tmp_path / "project")
    cache = tmp_path / "cache"
    full = make(folder, "all", cc=driver(cache), preexec_fn=_small_files)
    assert full.returncode == 0, full.stderr
    assert outputs(folder) == reference
    assert "failed" in full.stderr or "not usable" in full.stderr  # the cache said why it stopped
    stored = intact(cache)
    assert 0 < stored < UNITS
    assert make(folder, "clean", cc="cc").returncode == 0
    again = make(folder, "test", cc=driver(cache))
    assert again.returncode == 0 and outputs(folder) == reference and again.stderr == ""
    assert intact(cache) == UNITS and counted(stats(cache), "hits") == stored


def test_a_build_killed_mid_compile_resumes_to_the_same_bytes(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    folder = write_project(tmp_path / "project")
    cache = tmp_path / "cache"
    build = subprocess.Popen(
        ["make", "-j2", f"CC={driver(cache)}", "all"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while stored_so_far(cache) < 2:
        assert build.poll() is None and time.monotonic() < deadline, "the build ended before it was killed"
        time.sleep(0.05)
    os.killpg(build.pid, signal.SIGKILL)
    build.wait(timeout=60)
    assert intact(cache) < UNITS
    resumed = make(folder, "test", cc=driver(cache))
    assert resumed.returncode == 0, resumed.stderr
    assert outputs(folder) == reference and intact(cache) == UNITS
    shutil.rmtree(cache)
