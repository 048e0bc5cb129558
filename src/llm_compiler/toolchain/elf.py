"""Binary size of an ELF object, read from its section headers.

LLM Compiler measures binary size as ``.text + .data`` in the sense of the Berkeley
format of ``llvm-size`` (``size`` of GNU binutils): every section that is allocated
at run time (``SHF_ALLOC``) counts as

* **text** when it is executable or not writable (code, read-only data,
  ``.eh_frame``...);
* **data** when it is writable and occupies file space (not ``SHT_NOBITS``);
* **bss** otherwise (writable ``NOBITS``: takes no space on disk, excluded).

This module reads those figures straight from the object's bytes, so measuring needs
no extra process. It handles 32- and 64-bit, little- and big-endian ELF;
:func:`berkeley_size` reads Mach-O and COFF objects too, as ``llvm-size`` does
(:mod:`llm_compiler.toolchain.objects`), and names the fix for any other format.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import Symbol, SymbolTableSection

from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.objects import MEASURE_FIX, BerkeleySize, coff_size, macho_size, object_format

SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHT_NOBITS = 8


@dataclass(frozen=True)
class _Section:
    type: int
    flags: int
    size: int


def _sections(blob: bytes) -> list[_Section]:
    if blob[:4] != b"\x7fELF":
        raise InvalidInput(f"Not an ELF object: it is {object_format(blob)}.")
    elf_class, data_encoding = blob[4], blob[5]
    if elf_class not in (1, 2) or data_encoding not in (1, 2):
        raise InvalidInput("Malformed ELF header (unknown class or byte order).")
    endian = "<" if data_encoding == 1 else ">"
    if elf_class == 2:
        (shoff,) = struct.unpack_from(endian + "Q", blob, 0x28)
        shentsize, shnum = struct.unpack_from(endian + "HH", blob, 0x3A)
        header = endian + "IIQQQQIIQQ"
    else:
        (shoff,) = struct.unpack_from(endian + "I", blob, 0x20)
        shentsize, shnum = struct.unpack_from(endian + "HH", blob, 0x2E)
        header = endian + "IIIIIIIIII"
    if shoff == 0:
        return []
    if shnum == 0:
        # Extended numbering: the real count is in the first section header's sh_size.
        shnum = struct.unpack_from(header, blob, shoff)[5]
    if shoff + shnum * shentsize > len(blob):
        raise InvalidInput("Truncated ELF object: section headers run past the end of the file.")
    sections = []
    for index in range(shnum):
        fields = struct.unpack_from(header, blob, shoff + index * shentsize)
        sections.append(_Section(type=fields[1], flags=fields[2], size=fields[5]))
    return sections


def berkeley_size(blob: bytes) -> BerkeleySize:
    """Computes the Berkeley text/data/bss sizes of an ELF, Mach-O or COFF object.

    Args:
        blob: The bytes of a relocatable object, executable or shared library.

    Returns:
        The sizes, equal to what ``llvm-size --format=berkeley`` prints (for Mach-O,
        whose columns are ``__TEXT __DATA __OBJC others``, see
        :mod:`llm_compiler.toolchain.objects`).

    Raises:
        InvalidInput: ``blob`` is not a well-formed object of those formats; the
            message names the format found and how to measure the unit anyway.
    """
    found = object_format(blob)
    if found == "Mach-O":
        return macho_size(blob)
    if found == "COFF":
        return coff_size(blob)
    if found != "ELF":
        raise InvalidInput(f"Cannot measure the binary size of this object ({found}). {MEASURE_FIX}")
    text = data = bss = 0
    for section in _sections(blob):
        if not section.flags & SHF_ALLOC:
            continue
        if section.flags & SHF_EXECINSTR or not section.flags & SHF_WRITE:
            text += section.size
        elif section.type != SHT_NOBITS:
            data += section.size
        else:
            bss += section.size
    return BerkeleySize(text=text, data=data, bss=bss)


#: Symbol types that are not things a reference can resolve to.
_NOT_DEFINITIONS = {"STT_SECTION", "STT_FILE"}


def _symbols(blob: bytes) -> Iterator[Symbol]:
    """Every entry of an ELF file's symbol tables."""
    found = object_format(blob)
    if found != "ELF":
        raise InvalidInput(
            f"Cannot read the symbols of this object ({found}): the target's link check "
            "(validation) and per-function sizes read ELF symbol tables only, so lists for this unit "
            "cannot be validated here. Give the unit an ELF target: compile its source with --target "
            "x86_64-linux-gnu, or set the IR's 'target triple' and 'target datalayout' to an ELF "
            "target's (tune --no-validate measures it without validation, unsafely)."
        )
    try:
        elf = ELFFile(io.BytesIO(blob))
        sections = [s for s in elf.iter_sections() if isinstance(s, SymbolTableSection)]
    except ELFError as error:
        raise InvalidInput(f"Not a readable ELF file: {error}") from error
    for section in sections:
        yield from section.iter_symbols()


def elf_symbols(blob: bytes, *, defined: bool) -> Iterator[str]:
    """Global symbol names of an ELF file, defined ones or undefined (non-weak) ones."""
    for symbol in _symbols(blob):
        name, bind = symbol.name, symbol["st_info"]["bind"]
        if not name or bind not in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE"):
            continue
        is_undefined = symbol["st_shndx"] == "SHN_UNDEF"
        if defined and not is_undefined and symbol["st_info"]["type"] not in _NOT_DEFINITIONS:
            yield name.split("@")[0]
        elif not defined and is_undefined and bind != "STB_WEAK":
            yield name


def undefined_symbols(obj: bytes) -> frozenset[str]:
    """The symbols an object file needs from elsewhere (weak references excluded).

    Raises:
        InvalidInput: ``obj`` is not an ELF file.
    """
    return frozenset(elf_symbols(obj, defined=False))


def defined_symbols(obj: bytes) -> frozenset[str]:
    """The global symbols an object file defines for others.

    Raises:
        InvalidInput: ``obj`` is not an ELF file.
    """
    return frozenset(elf_symbols(obj, defined=True))


def function_sizes(blob: bytes) -> dict[str, int]:
    """Bytes of each function an ELF object defines (its symbol's ``st_size``), local
    functions included, by symbol name.

    Raises:
        InvalidInput: ``blob`` is not a readable ELF file.
    """
    return {
        symbol.name: int(symbol["st_size"])
        for symbol in _symbols(blob)
        if symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_shndx"] != "SHN_UNDEF" and symbol.name
    }
