"""Object code -> callable code in this process, without LLVM: a small linker for the
relocatable x86-64 ELF objects the compile worker emits (lowering/compile_worker.py).

What it links: the objects' allocated sections (code, read-only data, data, bss) laid out
in one anonymous mapping, code first (then made read + execute), data after it (read +
write); their symbols, defined in one object and used in another; and every undefined
symbol from `externals` (Python callbacks) or from the process (libc, libm, libgomp: loaded
with RTLD_GLOBAL). The relocations it applies are those of LLVM's large code model with
absolute addresses (what `build` compiles: R_X86_64_64) and the few others x86-64 code
may carry (PC-relative, GOT-relative, 32-bit absolute); a call or GOT-relative reference to
a symbol out of a 32-bit reach goes through a stub or a GOT slot inside the mapping.

Anything else (another machine, a relocation type not listed, a section that needs
running code at load time, thread-local storage) raises `Unsupported`, and the caller
links with LLVM's MCJIT instead; a malformed object (truncated, a relocation outside its
section), an undefined or twice-defined symbol raise `LinkError` (an `xrelay.Error` from
the caller). Unwind tables (.eh_frame) are not loaded: nothing unwinds
through this code.

Why not MCJIT: a process that only runs models (an artifact loaded, or a model built by
the compile workers) then never loads LLVM (about 40 MB of resident memory), and links in
a few milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import struct
from collections.abc import Mapping, Sequence

PAGE = mmap.PAGESIZE


class Unsupported(Exception):
    """The objects need something this linker does not do (the caller uses MCJIT)."""


class LinkError(Exception):
    """The objects cannot be linked (a symbol missing or defined twice)."""


# ELF constants (the System V ABI, x86-64 supplement)
_SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 2, 4, 8, 9
_SHF_WRITE, _SHF_ALLOC, _SHF_EXEC, _SHF_TLS = 0x1, 0x2, 0x4, 0x400
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON = 0, 0xFFF1, 0xFFF2
_STB_LOCAL, _STB_WEAK = 0, 2
_STT_SECTION, _STT_TLS = 3, 6
_R_64, _R_PC32, _R_PLT32, _R_GOTPCREL, _R_32, _R_32S, _R_PC64 = 1, 2, 4, 9, 10, 11, 24
_R_GOTOFF64, _R_GOTPC32, _R_GOT64, _R_GOTPCREL64, _R_GOTPC64, _R_PLTOFF64 = 25, 26, 27, 28, 29, 31
_R_GOTPCRELX, _R_REX_GOTPCRELX = 41, 42
_GOT_SYMBOL = "_GLOBAL_OFFSET_TABLE_"
_WIDE = (_R_64, _R_PC64, _R_GOTOFF64, _R_GOT64, _R_GOTPCREL64, _R_GOTPC64, _R_PLTOFF64)
_GOT_RELATIVE = (_R_GOTPCREL, _R_GOTPCRELX, _R_REX_GOTPCRELX)
_SKIPPED = (".eh_frame",)  # allocated, but only unwinders read it
# sections whose presence means code must run at load time
_INIT = (".init_array", ".fini_array", ".ctors", ".dtors", ".preinit_array")
_STUB = 16  # movabs $target, %rax; jmp *%rax; padding


class _Object:
    """One relocatable object's sections, symbols and relocations, as read from its bytes."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or len(data) < 64:
            raise Unsupported("not an ELF object")
        if data[4] != 2 or data[5] != 1:  # 64-bit, little-endian
            raise Unsupported("not a 64-bit little-endian ELF object")
        e_type, e_machine = struct.unpack_from("<HH", data, 16)
        if e_type != 1 or e_machine != 62:  # ET_REL, EM_X86_64
            raise Unsupported("not a relocatable x86-64 object")
        (shoff,) = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        self.data = data
        self.sections = [
            struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)
        ]
        names_at = self.sections[shstrndx][4]
        self.names = [self._string(names_at, s[0]) for s in self.sections]
        self.symbols: list[tuple[str, int, int, int, int]] = []  # name, bind, type, shndx, value
        self.relocations: list[tuple[int, list[tuple[int, int, int, int]]]] = []
        for k, s in enumerate(self.sections):
            kind, offset, size, link, info, entsize = s[1], s[4], s[5], s[6], s[7], s[9]
            name = self.names[k]
            if name in _INIT and size:
                raise Unsupported(f"section {name} (code that runs at load time)")
            if s[2] & _SHF_TLS:
                raise Unsupported(f"thread-local section {name}")
            if kind == _SHT_REL:
                raise Unsupported("REL relocations (x86-64 objects carry RELA)")
            if kind == _SHT_SYMTAB:
                strings = self.sections[link][4]
                for n in range(size // entsize):
                    st_name, st_info, _, shndx, value, _ = struct.unpack_from(
                        "<IBBHQQ", data, offset + n * entsize
                    )
                    self.symbols.append(
                        (self._string(strings, st_name), st_info >> 4, st_info & 0xF, shndx, value)
                    )
            elif kind == _SHT_RELA:
                entries = [
                    struct.unpack_from("<QQq", data, offset + n * entsize)
                    for n in range(size // entsize)
                ]
                self.relocations.append(
                    (info, [(o, i >> 32, i & 0xFFFFFFFF, a) for o, i, a in entries])
                )

    def _string(self, table: int, at: int) -> str:
        end = self.data.index(b"\0", table + at)
        return self.data[table + at : end].decode()

    def loaded(self, k: int) -> bool:
        """Is section k part of the image?"""
        s = self.sections[k]
        return bool(s[2] & _SHF_ALLOC) and self.names[k] not in _SKIPPED


def _parse(data: bytes) -> _Object:
    try:
        return _Object(data)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
        raise LinkError(f"a malformed object ({e})") from None


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a if a > 1 else n


def _process_symbol(name: str) -> int:
    """The address of `name` in this process (0 if none)."""
    try:
        return ctypes.cast(getattr(_PROCESS, name), ctypes.c_void_p).value or 0
    except AttributeError:
        return 0


_PROCESS = ctypes.CDLL(None, use_errno=True)  # libc and what is loaded RTLD_GLOBAL
_PROCESS.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def load_library(name: str) -> bool:
    """Make a shared library's symbols visible to linked code (RTLD_GLOBAL); False if it
    is not found."""
    path = ctypes.util.find_library(name)
    for candidate in (path, f"lib{name}.so.1", f"lib{name}.so"):
        if candidate:
            try:
                ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                continue
    return False


class LinkedCode:
    """Objects linked into this process; code stays mapped for as long as this lives."""

    def __init__(self, objects: Sequence[bytes], externals: Mapping[str, int]) -> None:
        parsed = [_parse(data) for data in objects]
        # the layout: code sections, then (page-aligned) stubs for far calls, then data
        placed: dict[tuple[int, int], int] = {}  # (object, section) -> offset in the image
        size = 0
        for data_pass in (False, True):
            if data_pass:
                size = _align(size, PAGE)
                self._code_size = size
            for n, obj in enumerate(parsed):
                for k, s in enumerate(obj.sections):
                    if obj.loaded(k) and bool(s[2] & _SHF_EXEC) != data_pass:
                        size = _align(size, max(1, s[8]))
                        placed[n, k] = size
                        size += s[5]
            if not data_pass:  # a stub per symbol at most, for calls out of reach
                size = _align(size, 16)
                self._stubs = size
                size += _STUB * sum(len(obj.symbols) for obj in parsed)
        size = _align(size, 8)
        self._got = size  # a GOT slot per symbol at most
        size += 8 * sum(len(obj.symbols) for obj in parsed)
        size = _align(max(size, 1), PAGE)
        self._map = mmap.mmap(
            -1, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE
        )
        self._anchor = ctypes.c_char.from_buffer(self._map)
        base = ctypes.addressof(self._anchor)
        self.base = base
        for (n, k), at in placed.items():
            s = parsed[n].sections[k]
            if s[1] != _SHT_NOBITS:
                self._map[at : at + s[5]] = parsed[n].data[s[4] : s[4] + s[5]]

        # symbol addresses: every object's globals, then the externals and the process
        globals_: dict[str, int] = {}
        weak: set[str] = set()
        for n, obj in enumerate(parsed):
            for name, bind, kind, shndx, value in obj.symbols:
                if kind == _STT_TLS:
                    raise Unsupported(f"thread-local symbol {name}")
                if shndx == _SHN_COMMON:
                    raise Unsupported(f"COMMON symbol {name}")
                if bind == _STB_LOCAL or shndx == _SHN_UNDEF or not name:
                    continue
                address = (
                    value if shndx == _SHN_ABS else self._section_address(placed, n, shndx) + value
                )
                if name in globals_:
                    if bind == _STB_WEAK:
                        continue  # the definition before stays
                    if name not in weak:
                        raise LinkError(f"symbol '{name}' is defined twice")
                    weak.discard(name)  # a strong definition replaces a weak one
                elif bind == _STB_WEAK:
                    weak.add(name)
                globals_[name] = address
        self.symbols = globals_
        self._next_stub, self._next_slot = self._stubs, self._got
        self._far: dict[int, int] = {}
        self._slots: dict[int, int] = {}
        for n, obj in enumerate(parsed):
            for target, entries in obj.relocations:
                if (n, target) not in placed:
                    continue  # unwind tables, debug sections
                where, size = base + placed[n, target], obj.sections[target][5]
                for offset, symbol, kind, addend in entries:
                    if offset + (8 if kind in _WIDE else 4) > size or symbol >= len(obj.symbols):
                        raise LinkError("a malformed object (a relocation outside its section)")
                    value = self._resolve(obj, n, placed, symbol, externals)
                    self._relocate(where + offset, kind, value, addend, obj.symbols[symbol][0])
        if self._code_size and _PROCESS.mprotect(
            ctypes.c_void_p(base), ctypes.c_size_t(self._code_size), mmap.PROT_READ | mmap.PROT_EXEC
        ):
            raise OSError(ctypes.get_errno(), "mprotect failed on the linked code")

    def _section_address(self, placed: dict[tuple[int, int], int], n: int, shndx: int) -> int:
        if (n, shndx) not in placed:
            raise Unsupported(f"a symbol in section {shndx}, which is not loaded")
        return self.base + placed[n, shndx]

    def _resolve(
        self,
        obj: _Object,
        n: int,
        placed: dict[tuple[int, int], int],
        symbol: int,
        externals: Mapping[str, int],
    ) -> int:
        if symbol == 0:  # no symbol: the addend alone
            return 0
        name, bind, kind, shndx, value = obj.symbols[symbol]
        if kind == _STT_SECTION:
            return self._section_address(placed, n, shndx)
        if shndx == _SHN_ABS:
            return value
        if shndx != _SHN_UNDEF:
            if bind == _STB_LOCAL:
                return self._section_address(placed, n, shndx) + value
            return self.symbols[name]
        if name == _GOT_SYMBOL:
            return self.base + self._got
        address = self.symbols.get(name) or externals.get(name) or _process_symbol(name)
        if not address and bind != _STB_WEAK:
            raise LinkError(f"undefined symbol '{name}'")
        return address

    def _relocate(self, place: int, kind: int, value: int, addend: int, name: str) -> None:
        at, got = place - self.base, self.base + self._got
        if kind == _R_64:
            struct.pack_into("<Q", self._map, at, (value + addend) & (2**64 - 1))
        elif kind == _R_PC64:
            struct.pack_into("<q", self._map, at, value + addend - place)
        elif kind in (_R_PC32, _R_PLT32):
            delta = value + addend - place
            if not -(2**31) <= delta < 2**31:
                if kind != _R_PLT32:
                    raise Unsupported(f"a 32-bit PC-relative reference to far symbol '{name}'")
                delta = self._stub(value) + addend - place  # a call: through a stub
            struct.pack_into("<i", self._map, at, delta)
        elif kind in _GOT_RELATIVE:
            struct.pack_into(
                "<i", self._map, at, self._fits(self._slot(value) + addend - place, name)
            )
        elif kind == _R_GOTOFF64:  # position-independent code, large model
            struct.pack_into("<q", self._map, at, value + addend - got)
        elif kind == _R_GOTPC64:
            struct.pack_into("<q", self._map, at, got + addend - place)
        elif kind == _R_GOTPC32:
            struct.pack_into("<i", self._map, at, self._fits(got + addend - place, name))
        elif kind == _R_GOT64:
            struct.pack_into("<q", self._map, at, self._slot(value) - got + addend)
        elif kind == _R_GOTPCREL64:
            struct.pack_into("<q", self._map, at, self._slot(value) + addend - place)
        elif kind == _R_PLTOFF64:
            struct.pack_into("<q", self._map, at, self._stub(value) + addend - got)
        elif kind in (_R_32, _R_32S):
            v = value + addend
            if not (0 <= v < 2**32 if kind == _R_32 else -(2**31) <= v < 2**31):
                raise Unsupported(f"a 32-bit absolute reference to '{name}' out of reach")
            struct.pack_into("<I" if kind == _R_32 else "<i", self._map, at, v)
        else:
            raise Unsupported(f"relocation type {kind} (against '{name}')")

    @staticmethod
    def _fits(delta: int, name: str) -> int:
        if not -(2**31) <= delta < 2**31:
            raise Unsupported(f"a 32-bit PC-relative reference to '{name}' out of reach")
        return delta

    def _stub(self, target: int) -> int:
        """A jump to `target` inside the image (for a call that cannot reach it)."""
        if target not in self._far:
            at = self._next_stub
            self._next_stub += _STUB
            # movabs $target, %rax ; jmp *%rax
            code = b"\x48\xb8" + struct.pack("<Q", target) + b"\xff\xe0"
            self._map[at : at + len(code)] = code.ljust(_STUB, b"\xcc")
            self._far[target] = self.base + at
        return self._far[target]

    def _slot(self, target: int) -> int:
        """A GOT slot holding `target`."""
        if target not in self._slots:
            at = self._next_slot
            self._next_slot += 8
            struct.pack_into("<Q", self._map, at, target)
            self._slots[target] = self.base + at
        return self._slots[target]

    def address(self, name: str) -> int:
        """A defined global symbol's address (0 if there is none)."""
        return self.symbols.get(name, 0)
