"""Small programs a tiny model is taught to answer, and the lists it is taught.

The lists are what ``llm-compiler tune tests/models/data --budget 200`` found with LLVM
19 (each validated); the sizes are -Oz's and the list's. The prompts are short (700 to
3,400 tokens), so fine-tuning a tiny model on them takes seconds on a CPU.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"

#: Program file: (the list, or None when nothing beats -Oz; -Oz's size; the list's size).
TAUGHT: dict[str, tuple[str | None, int, int]] = {
    "adler.c": ("module(default<O1>),function(reassociate)", 114, 112),
    "clamp.c": ("function(sroa),module(module-inline)", 182, 168),
    "add.c": (None, 52, 52),
}
