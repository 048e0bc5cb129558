"""Fixtures of the validation tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.registry import load_registry
from llm_compiler.toolchain.llvm import Toolchain


@pytest.fixture(scope="module")
def unsafe_compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    """A compiler that accepts every pass opt knows (to check known-bad lists)."""
    names = sorted({entry.name for entry in load_registry(toolchain).entries if entry.kind == "pass"})
    with Compiler(toolchain, allow_extra=names, workers=2) as compiler:
        yield compiler
