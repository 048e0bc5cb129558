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
from elftools.elf.relocation import RelocationSection
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
    return _read_sections(blob)[0]


def section_names(blob: bytes) -> list[str]:
    """The names of an ELF file's sections, in header order.

    Raises:
        InvalidInput: ``blob`` is not a well-formed ELF file.
    """
    return _read_sections(blob)[1]


def _read_sections(blob: bytes) -> tuple[list[_Section], list[str]]:
    """The section headers of an ELF file, and each section's name."""
    if blob[:4] != b"\x7fELF":
        raise InvalidInput(f"Not an ELF object: it is {object_format(blob)}.")
    elf_class, data_encoding = blob[4], blob[5]
    if elf_class not in (1, 2) or data_encoding not in (1, 2):
        raise InvalidInput("Malformed ELF header (unknown class or byte order).")
    endian = "<" if data_encoding == 1 else ">"
    if elf_class == 2:
        (shoff,) = struct.unpack_from(endian + "Q", blob, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", blob, 0x3A)
        header = endian + "IIQQQQIIQQ"
    else:
        (shoff,) = struct.unpack_from(endian + "I", blob, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", blob, 0x2E)
        header = endian + "IIIIIIIIII"
    if shoff == 0:
        return [], []
    if shnum == 0 or shstrndx == 0xFFFF:
        # Extended numbering: the real count is in the first section header's sh_size,
        # the name table's index in its sh_link.
        first = struct.unpack_from(header, blob, shoff)
        shnum = shnum or first[5]
        shstrndx = first[6] if shstrndx == 0xFFFF else shstrndx
    if shoff + shnum * shentsize > len(blob):
        raise InvalidInput("Truncated ELF object: section headers run past the end of the file.")
    headers = [struct.unpack_from(header, blob, shoff + index * shentsize) for index in range(shnum)]
    sections = [_Section(type=fields[1], flags=fields[2], size=fields[5]) for fields in headers]
    names = [""] * shnum
    if 0 < shstrndx < shnum:
        table = headers[shstrndx][4]
        for index, fields in enumerate(headers):
            start = table + fields[0]
            end = blob.find(b"\0", start)
            if 0 <= start < end:
                names[index] = blob[start:end].decode("utf-8", "replace")
    return sections, names


#: The groups of :func:`section_sizes`, in report order.
SECTION_GROUPS = (".text", ".eh_frame", ".rodata", ".data", "other")

#: Sections that only describe how to unwind the code (grouped as ``.eh_frame``).
_UNWIND_PREFIXES = (".eh_frame", ".ARM.exidx", ".ARM.extab", ".gcc_except_table")


def section_group(name: str, flags: int) -> str:
    """The group of :data:`SECTION_GROUPS` an allocated, file-backed section counts in."""
    if name.startswith(_UNWIND_PREFIXES):
        return ".eh_frame"
    if flags & SHF_EXECINSTR:
        return ".text"
    if flags & SHF_WRITE:
        return ".data"
    if name.startswith((".rodata", ".srodata")) or name == ".rdata":
        return ".rodata"
    return "other"


def section_sizes(blob: bytes) -> dict[str, int]:
    """Where an ELF file's binary size is, by kind of section.

    The groups are those of :data:`SECTION_GROUPS`: ``.text`` (executable code),
    ``.eh_frame`` (unwind tables: ``.eh_frame``, ``.eh_frame_hdr``, ``.ARM.exidx``,
    ``.ARM.extab``, ``.gcc_except_table``), ``.rodata`` (read-only data), ``.data``
    (writable data that takes file space) and ``other`` (the rest that is loaded:
    symbol and relocation tables of a linked program, notes...). They add up to
    :func:`berkeley_size`'s ``binary_size``; bss is not counted.

    Raises:
        InvalidInput: ``blob`` is not a well-formed ELF file (Mach-O and COFF objects
            have no per-section breakdown here).
    """
    sizes = dict.fromkeys(SECTION_GROUPS, 0)
    for section, name in zip(*_read_sections(blob), strict=True):
        if not section.flags & SHF_ALLOC or section.type == SHT_NOBITS:
            continue
        sizes[section_group(name, section.flags)] += section.size
    return sizes


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


def function_costs(blob: bytes) -> dict[str, int] | None:
    """Bytes each function of an ELF object costs: its code (its symbol's ``st_size``)
    and its unwind-table entry (its FDE in ``.eh_frame``), by symbol name.

    Returns:
        The costs; None where functions cannot be told apart by address: code in more
        than one section (``-ffunction-sections``, COMDAT groups) or no ``.eh_frame``
        readable as DWARF call frame information.

    Raises:
        InvalidInput: ``blob`` is not a readable ELF file.
    """
    from elftools.dwarf.callframe import FDE

    try:
        elf = ELFFile(io.BytesIO(blob))
        functions = [
            symbol
            for section in elf.iter_sections()
            if isinstance(section, SymbolTableSection)
            for symbol in section.iter_symbols()
            if symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_shndx"] != "SHN_UNDEF" and symbol.name
        ]
        if len({symbol["st_shndx"] for symbol in functions}) > 1:
            return None
        costs = {symbol.name: int(symbol["st_size"]) for symbol in functions}
        at = {int(symbol["st_value"]): symbol.name for symbol in functions}
        dwarf = elf.get_dwarf_info(relocate_dwarf_sections=True)
        if not dwarf.has_EH_CFI():
            return costs if elf.get_section_by_name(".eh_frame") is None else None
        for entry in dwarf.EH_CFI_entries():
            if isinstance(entry, FDE):
                name = at.get(int(entry.header["initial_location"]))
                if name is None:
                    return None
                costs[name] += int(entry.header["length"]) + (12 if entry.structs.dwarf_format == 64 else 4)
    except (ELFError, KeyError, ValueError, AssertionError) as error:
        raise InvalidInput(f"Not a readable ELF file: {error}") from error
    return costs


#: Per machine (``e_machine``): the relocation type of an absolute pointer, and the bytes
#: of the dynamic relocation a position-independent link makes of it.
_ABSOLUTE_POINTER = {
    62: (1, 24),  # x86-64: R_X86_64_64 -> R_X86_64_RELATIVE (Elf64_Rela)
    3: (1, 8),  # i386: R_386_32 -> R_386_RELATIVE (Elf32_Rel)
    183: (257, 24),  # AArch64: R_AARCH64_ABS64 -> R_AARCH64_RELATIVE (Elf64_Rela)
    40: (2, 8),  # ARM: R_ARM_ABS32 -> R_ARM_RELATIVE (Elf32_Rel)
}


def dynamic_relocation_bytes(blob: bytes) -> int:
    """Bytes of dynamic relocations a position-independent link (a PIE or a shared
    library) makes for an object's absolute pointers.

    Each absolute pointer in a loaded section (a table of pointers to functions or
    strings, a pointer initialized with an address) cannot be resolved when the program
    is linked: the dynamic linker writes it at load time, from one relocation entry in
    ``.rela.dyn`` (``.rel.dyn``), which the link's binary size counts. A relocatable
    object's own relocation sections are not loaded, so its binary size misses them.

    Returns:
        The count of such relocations times the size of a dynamic relocation entry on
        this machine; 0 for machines not known here.

    Raises:
        InvalidInput: ``blob`` is not a readable ELF object.
    """
    if blob[:4] != b"\x7fELF":
        raise InvalidInput(f"Not an ELF object: it is {object_format(blob)}.")
    endian = "<" if blob[5] == 1 else ">"
    (machine,) = struct.unpack_from(endian + "H", blob, 0x12)
    known = _ABSOLUTE_POINTER.get(machine)
    if known is None:
        return 0
    absolute, entry_bytes = known
    try:
        elf = ELFFile(io.BytesIO(blob))
        count = 0
        for section in elf.iter_sections():
            if not isinstance(section, RelocationSection):
                continue
            target = elf.get_section(section["sh_info"])
            if not target["sh_flags"] & SHF_ALLOC:
                continue  # debug information: not loaded
            types = (relocation["r_info_type"] for relocation in section.iter_relocations())
            count += sum(1 for kind in types if kind == absolute)
    except (ELFError, KeyError, ValueError) as error:
        raise InvalidInput(f"Not a readable ELF file: {error}") from error
    return count * entry_bytes
