"""The ``IR2Vec`` observation: IR2Vec's flow-aware program vector (300 floats).

The ``ir2vec`` package (2.1, from PyPI) links its own LLVM 17: it reads no syntax added
since, and on IR it cannot parse it ends the whole process rather than raising. So:

* IR is first brought to LLVM 17's syntax where that keeps what IR2Vec reads (its
  vocabulary is opcodes, types and operand kinds, not flags or attributes): the
  instruction flags LLVM 18 to 22 added (``nuw``/``nsw`` on ``trunc``, ``nusw``/``nuw``
  on ``getelementptr``, ``disjoint``, ``nneg``, ``samesign``) are dropped, attribute
  groups become ``{ nounwind }``, and the newer parameter attributes (``range``,
  ``initializes``, ``captures``, ``dead_on_unwind``, ``dead_on_return``, ``writable``)
  are dropped;
* the embedding runs in a child process kept for the session, so IR it still cannot
  read raises :class:`~llm_compiler.errors.LlmCompilerError` with its message, and the
  environment goes on; the child is started again after it crashed (ir2vec 2.1.1
  crashes now and then on a module it reads at other times) and the module retried.

Measured on the six bundled examples at -Oz with LLVM 19 and 22: with this, all twelve
modules are read; without it, eleven of the twelve are not.
"""

from __future__ import annotations

import atexit
import json
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from llm_compiler.errors import LlmCompilerError

#: Length of IR2Vec's program vectors.
DIMENSIONS = 300
#: Times a module is embedded before a crash of ir2vec is reported (it crashes now and
#: then on modules it reads at other times: 2 runs in 6 on one of the examples).
ATTEMPTS = 3

_FLAGS = re.compile(r"\b(?:nuw|nsw|nusw|disjoint|nneg|samesign) ")
_GROUP = re.compile(r"^(attributes #\d+ = )\{.*\}\s*$", re.MULTILINE)
_NEW_ATTRIBUTES = re.compile(
    r"\b(?:range|initializes|captures)\((?:[^()]|\([^()]*\))*\) ?"
    r"|\b(?:dead_on_unwind|dead_on_return|writable)\b ?"
)
_SPLAT = re.compile(r"<(\d+) x ([^<>]+)> splat \(([^()]+?) ([^() ]+)\)")
#: What the child prints before each vector (the LLVM it links prints its errors to stdout).
_MARK = "VECTOR "

_CHILD = """
import json, sys
import ir2vec
for line in sys.stdin:
    vector = ir2vec.initEmbedding(line.strip(), "fa", "p").getProgramVector()
    print("VECTOR " + json.dumps(list(vector)), flush=True)
"""


def as_llvm17(ir: str) -> str:
    """``ir`` in the syntax IR2Vec's LLVM reads (module docstring).

    Example:
        >>> as_llvm17("%2 = trunc nuw nsw i64 %1 to i32")
        '%2 = trunc i64 %1 to i32'
        >>> as_llvm17("select <2 x i1> %c, <2 x double> splat (double 5.0), <2 x double> %x")
        'select <2 x i1> %c, <2 x double> <double 5.0, double 5.0>, <2 x double> %x'
    """
    ir = _FLAGS.sub("", ir)
    ir = _SPLAT.sub(lambda m: f"<{m[1]} x {m[2]}> <{', '.join([f'{m[3]} {m[4]}'] * int(m[1]))}>", ir)
    ir = _GROUP.sub(r"\1{ nounwind }", ir)
    return _NEW_ATTRIBUTES.sub("", ir)


class _Embedder:
    """The child process that runs ir2vec (started on first use, again after it died)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._scratch = tempfile.TemporaryDirectory(prefix="llm-compiler-ir2vec-")

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        return self._process

    def vector(self, ir: str) -> np.ndarray:
        with self._lock:
            folder = Path(self._scratch.name)
            folder.mkdir(exist_ok=True)
            path = folder / "module.ll"
            path.write_text(as_llvm17(ir))
            for _ in range(ATTEMPTS):
                answer, status, said = self._ask(path)
                if answer:
                    return np.asarray(json.loads(answer), dtype=np.float32)
                if status >= 0 or said.strip():
                    break  # it refused the IR (a parse error), not a crash: no retry
            if "No module named 'ir2vec'" in said:
                raise LlmCompilerError(
                    "The IR2Vec observation needs the ir2vec package: pip install ir2vec "
                    "(wheels for x86-64 Linux)."
                )
            how = f"it crashed (signal {-status})" if status < 0 else f"it exited with status {status}"
            raise LlmCompilerError(f"ir2vec could not read this module: {said.strip()[-500:] or how}")

    def _ask(self, path: Path) -> tuple[str, int, str]:
        """(vector line or "", the child's exit status if it died, what it printed)."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        said: list[str] = []
        try:
            process.stdin.write(f"{path}\n")
            process.stdin.flush()
            while line := process.stdout.readline():
                if line.startswith(_MARK):
                    return line.removeprefix(_MARK), 0, ""
                said.append(line)
        except BrokenPipeError:
            pass
        process.kill()
        _, errors = process.communicate()
        self._process = None
        return "", process.returncode, "".join(said) + errors

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                self._process.kill()
                self._process.communicate()
                self._process = None
            self._scratch.cleanup()


_EMBEDDER = _Embedder()
atexit.register(_EMBEDDER.close)


def ir2vec_vector(ir: str) -> np.ndarray:
    """IR2Vec's flow-aware program vector of ``ir`` (:data:`DIMENSIONS` floats).

    Raises:
        LlmCompilerError: The ``ir2vec`` package is not installed, or cannot read this IR.
    """
    return _EMBEDDER.vector(ir)
