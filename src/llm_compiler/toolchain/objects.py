"""Which object format a file is, and the Berkeley sizes of Mach-O and COFF objects.

LLM Compiler measures ELF objects (:mod:`llm_compiler.toolchain.elf`); IR whose
``target triple`` names Darwin or Windows lowers to Mach-O or COFF instead. This module
reads those the way ``llvm-size`` does, so that such units are measured too:

* **Mach-O** (``llvm-size`` prints ``__TEXT __DATA __OBJC others``): in an object
  (``MH_OBJECT``) every section counts by the segment its header names, in a linked
  file every segment by its ``vmsize``. ``__TEXT`` is **text**; ``__DATA`` and
  ``__OBJC`` are **data**, except zero-fill sections (``S_ZEROFILL``,
  ``S_GB_ZEROFILL``, ``S_THREAD_LOCAL_ZEROFILL``; in a linked file, a segment's
  ``vmsize`` past its ``filesize``), which are **bss**. Others (``__LD``'s compact
  unwind, ``__DWARF``, ``__LINKEDIT``) are not loaded as they stand and count in none,
  as ``llvm-size`` leaves them out of its ``__TEXT`` and ``__DATA`` columns.
* **COFF** objects, ``bigobj`` objects and PE images (``llvm-size`` prints
  ``text data bss``): a section with ``IMAGE_SCN_CNT_CODE`` is **text**, else one with
  ``IMAGE_SCN_CNT_INITIALIZED_DATA`` is **data**, else one with
  ``IMAGE_SCN_CNT_UNINITIALIZED_DATA`` is **bss**. A section's size is its
  ``SizeOfRawData`` (in an image, the smaller of that and ``VirtualSize``).

So ``text`` equals ``llvm-size``'s text (or ``__TEXT``) column and ``data + bss`` its
data (or ``__DATA + __OBJC``) columns; binary size is ``text + data`` as for ELF.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from llm_compiler.errors import InvalidInput


@dataclass(frozen=True)
class BerkeleySize:
    """Section sizes of an object in the Berkeley sense (bytes)."""

    text: int
    data: int
    bss: int

    @property
    def binary_size(self) -> int:
        """LLM Compiler's binary size: text + data (bss takes no file space)."""
        return self.text + self.data


#: How to make a unit measurable when its objects are in a format no reader here knows.
MEASURE_FIX = (
    "Binary size is read from ELF, Mach-O and COFF objects. Measure this unit with "
    "--objective ir-instructions (no object is made), or give it a target whose objects "
    "are ELF: compile its source with --target x86_64-linux-gnu, or set the IR's "
    "'target triple' and 'target datalayout' to an ELF target's."
)

_MACHO_MAGICS = {
    b"\xfe\xed\xfa\xce": (">", 32),
    b"\xce\xfa\xed\xfe": ("<", 32),
    b"\xfe\xed\xfa\xcf": (">", 64),
    b"\xcf\xfa\xed\xfe": ("<", 64),
}
_COFF_MACHINES = {0x14C, 0x1C4, 0x8664, 0xAA64, 0xA641, 0xA64E}  # i386, ARMNT, x86-64, ARM64, EC, X
_BIGOBJ_UUID = bytes.fromhex("c7a1bad1eebaa94baf20faf66aa4dcb8")


def object_format(blob: bytes) -> str:
    """The object file format of ``blob``, by its magic, as a readable name.

    Returns:
        ``"ELF"``, ``"Mach-O"``, ``"COFF"`` (objects, ``bigobj`` objects and PE images)
        or, for formats no reader here measures, a description such as
        ``"WebAssembly"``, ``"a universal (fat) Mach-O file"`` or
        ``"an unknown format (first bytes 3c 21 2d 2d)"``.
    """
    head = blob[:4]
    if head == b"\x7fELF":
        return "ELF"
    if head in _MACHO_MAGICS:
        return "Mach-O"
    if head in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):
        return "a universal (fat) Mach-O file"
    if _coff_header(blob) is not None:
        return "COFF"
    if head == b"\0asm":
        return "WebAssembly"
    if head == b"BC\xc0\xde" or head == b"\xde\xc0\x17\x0b":
        return "LLVM bitcode"
    if blob[:8] in (b"!<arch>\n", b"!<thin>\n"):
        return "an archive"
    if head[:2] in (b"\x01\xdf", b"\x01\xf7"):
        return "XCOFF"
    shown = " ".join(f"{byte:02x}" for byte in blob[:4]) or "none: the file is empty"
    return f"an unknown format (first bytes {shown})"


def macho_size(blob: bytes) -> BerkeleySize:
    """Computes the Berkeley text/data/bss sizes of a (thin) Mach-O file.

    Raises:
        InvalidInput: ``blob`` is not a well-formed Mach-O file.
    """
    if blob[:4] not in _MACHO_MAGICS:
        raise InvalidInput(f"Not a Mach-O file: it is {object_format(blob)}.")
    endian, bits = _MACHO_MAGICS[blob[:4]]
    if len(blob) < 32:
        raise InvalidInput("Truncated Mach-O file: the header runs past the end of the file.")
    filetype, ncmds = struct.unpack_from(endian + "II", blob, 12)
    is_object = filetype == 1  # MH_OBJECT: one unnamed segment; its sections name theirs
    segment_cmd, segment = (0x19, endian + "16sQQQQIIII") if bits == 64 else (0x1, endian + "16sIIIIIIII")
    section = endian + ("16s16sQQIIIIIIII" if bits == 64 else "16s16sIIIIIIIII")
    text = data = bss = 0
    offset = 32 if bits == 64 else 28
    for _ in range(ncmds):
        if offset + 8 > len(blob):
            raise InvalidInput("Truncated Mach-O file: load commands run past the end of the file.")
        cmd, cmdsize = struct.unpack_from(endian + "II", blob, offset)
        if cmdsize < 8 or offset + cmdsize > len(blob):
            raise InvalidInput(f"Malformed Mach-O file: a load command of {cmdsize} bytes at {offset}.")
        if cmd == segment_cmd:
            name, _, vmsize, _, filesize, _, _, nsects, _ = struct.unpack_from(segment, blob, offset + 8)
            first = offset + 8 + struct.calcsize(segment)
            if first + nsects * struct.calcsize(section) > offset + cmdsize:
                raise InvalidInput("Malformed Mach-O file: section headers run past their segment command.")
            if is_object:
                for index in range(nsects):
                    fields = struct.unpack_from(section, blob, first + index * struct.calcsize(section))
                    zerofill = fields[8] & 0xFF in (0x1, 0xC, 0x12)
                    counted = _macho_columns(fields[1], fields[3], 0 if zerofill else fields[3])
                    text, data, bss = text + counted[0], data + counted[1], bss + counted[2]
            else:
                counted = _macho_columns(name, vmsize, min(filesize, vmsize))
                text, data, bss = text + counted[0], data + counted[1], bss + counted[2]
        offset += cmdsize
    return BerkeleySize(text=text, data=data, bss=bss)


def _macho_columns(segment: bytes, size: int, in_file: int) -> tuple[int, int, int]:
    """(text, data, bss) of ``size`` bytes in ``segment``, ``in_file`` of them not zero-fill."""
    name = segment.rstrip(b"\0")
    if name == b"__TEXT":
        return size, 0, 0
    if name in (b"__DATA", b"__OBJC"):
        return 0, in_file, size - in_file
    return 0, 0, 0


def _coff_header(blob: bytes) -> tuple[int, int, bool] | None:
    """(offset of the section table, number of sections, is an image) of a COFF
    object, ``bigobj`` object or PE image; None when ``blob`` is none of them."""
    if blob[:2] == b"MZ" and len(blob) >= 0x40:
        (pe,) = struct.unpack_from("<I", blob, 0x3C)
        if blob[pe : pe + 4] == b"PE\0\0" and len(blob) >= pe + 24:
            count, optional = struct.unpack_from("<H12xH", blob, pe + 6)
            return pe + 24 + optional, count, True
        return None
    if blob[:4] == b"\0\0\xff\xff" and len(blob) >= 56 and blob[12:28] == _BIGOBJ_UUID:
        (count,) = struct.unpack_from("<I", blob, 44)
        return 56, count, False
    if len(blob) >= 20:
        machine, count, optional = struct.unpack_from("<HH12xH", blob, 0)
        if machine in _COFF_MACHINES and optional == 0:
            return 20, count, False
    return None


def coff_size(blob: bytes) -> BerkeleySize:
    """Computes the Berkeley text/data/bss sizes of a COFF object or PE image.

    Raises:
        InvalidInput: ``blob`` is not a well-formed COFF file.
    """
    header = _coff_header(blob)
    if header is None:
        raise InvalidInput(f"Not a COFF file: it is {object_format(blob)}.")
    table, count, image = header
    if table + count * 40 > len(blob):
        raise InvalidInput("Truncated COFF file: section headers run past the end of the file.")
    text = data = bss = 0
    for index in range(count):
        virtual, raw, flags = struct.unpack_from("<8xI4xI16xI", blob, table + index * 40)
        size = min(virtual, raw) if image else raw
        if flags & 0x20:  # IMAGE_SCN_CNT_CODE
            text += size
        elif flags & 0x40:  # IMAGE_SCN_CNT_INITIALIZED_DATA
            data += size
        elif flags & 0x80:  # IMAGE_SCN_CNT_UNINITIALIZED_DATA
            bss += size
    return BerkeleySize(text=text, data=data, bss=bss)
