"""Fetching a Debian source package works on a machine that never had source entries.

The project's own added entries are moved aside and apt's lists refreshed without them,
as on a fresh Debian machine; asking apt for a source package must then add them again
by itself (not only when the corpus builder runs first). Whatever happens, the machine
is left with source entries, as it was.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from llm_compiler.corpus import debian
from llm_compiler.toolchain.runner import run_command

pytestmark = [pytest.mark.network, pytest.mark.debian, pytest.mark.slow]


def _apt_update() -> None:
    run_command(["apt-get", "update", "-q"], timeout=900)


def test_source_versions_adds_the_source_entries_a_fresh_machine_lacks(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("moving apt's source entries aside needs root")
    added = [path for path in (debian.ADDED_SOURCES, debian.ADDED_LIST) if path.exists()]
    aside = {path: tmp_path / path.name for path in added}
    for path, place in aside.items():
        shutil.move(path, place)
    try:
        if added:
            _apt_update()
        if debian.has_source_entries():
            pytest.skip("this machine has source entries of its own: nothing to add")
        source, versions = debian.source_versions("bzip2")
        assert source == "bzip2" and versions
        assert debian.ADDED_SOURCES.exists() or debian.ADDED_LIST.exists()
        assert debian.has_source_entries()
    finally:
        if not (debian.ADDED_SOURCES.exists() or debian.ADDED_LIST.exists()) and aside:
            for path, place in aside.items():
                shutil.move(place, path)
            _apt_update()
