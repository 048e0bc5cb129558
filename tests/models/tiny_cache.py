"""The cache of the tiny models' artifacts: where they live, how they are named, built once.

Every artifact of :mod:`tests.models.tiny_models` (the npm tarball, the tokenizer, the
saved models, the GGUF files) lives under :func:`cache_root` (``$LLM_COMPILER_TEST_CACHE``,
else ``~/.cache/llm-compiler-tests``) in a folder or file named by a hash
(:func:`_digest`) of what it was built from, :data:`BUILD_VERSION` included. A build
(:func:`_build_once`) writes into a temporary path beside its final one and renames it
into place, under a file lock, so an interrupted build leaves nothing half-made and two
test processes never build the same thing at once; a path that exists is reused as it is.

This module imports nothing of the tiny models' other modules (:mod:`tests.models.tiny_tokenizer`,
:mod:`tests.models.tiny_gguf`, :mod:`tests.models.tiny_models`), which all import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

try:
    import fcntl
except ImportError:  # not POSIX: builds are still atomic, just not locked
    fcntl = None  # type: ignore[assignment]

#: Bump when what a build writes changes, so that caches built the old way are not reused.
BUILD_VERSION: Final = 1

#: The environment variable naming the cache folder.
CACHE_ENV: Final = "LLM_COMPILER_TEST_CACHE"


class TinyModelError(RuntimeError):
    """A tiny model or its tokenizer could not be built (bad data, the samples not learnt)."""


def cache_root() -> Path:
    """The folder of all built artifacts: ``$LLM_COMPILER_TEST_CACHE`` or ``~/.cache/llm-compiler-tests``."""
    configured = os.environ.get(CACHE_ENV)
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "llm-compiler-tests"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _digest(value: object) -> str:
    """A short stable hash of a JSON-able value."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``path`` (created if missing) for the block."""
    with path.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _build_once(final: Path, build: Callable[[Path], object], *, is_dir: bool = True) -> Path:
    """Returns ``final``, building it first with ``build(temporary_path)`` if it is missing.

    The build writes to a temporary path beside ``final`` that is renamed to ``final`` only
    when it succeeded, under a lock so that one process builds while others wait. Leftover
    temporary paths of builds that were killed are removed.
    """
    if final.exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with _locked(final.parent / f".{final.name}.lock"):
        if final.exists():  # another process built it while we waited
            return final
        prefix = f".{final.name}.tmp-"
        for stale in final.parent.glob(prefix + "*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)
        temporary = final.parent / f"{prefix}{os.getpid()}"
        if is_dir:
            temporary.mkdir()
        try:
            build(temporary)
            os.replace(temporary, final)
        except BaseException:
            if temporary.is_dir():
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                temporary.unlink(missing_ok=True)
            raise
    return final


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
