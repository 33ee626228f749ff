"""What the two allocators under Python hold, arena by arena, so an operator
can tell fragmentation from a leak (docs/design.md, Memory growth).

glibc's ``malloc_info`` describes each of malloc's arenas (the main heap and
one per thread that met contention, up to ``PROOFGATE_MALLOC_ARENA_MAX``): its
size, and its free chunks by size. Free space in chunks smaller than a page
cannot go back to the system (``malloc_trim`` hands back whole pages only),
so it is the part of the heap that fragmentation keeps; space in use growing
instead is something holding memory. pymalloc, which serves Python's objects
of up to 512 bytes from 1 MiB arenas of its own (``mmap``, outside malloc's
heaps), gives an arena back only when every block in it is free; its report
(``_PyObject_DebugMallocStats``, CPython's, the one place it is read) says how
many arenas it holds and how much of them is in use. This module is
CPython's door (docs/design.md, Libraries' private names): the function is
exported by CPython's C API for ``sys._debugmallocstats``, which can only
print to stderr. Checked against cpython 3.11: on an upgrade, read its
report's "# arenas" and "# bytes in allocated blocks" lines.

Both write to a C ``FILE``; an ``open_memstream`` buffer takes it, so nothing
reaches the process's stderr. Elsewhere than glibc, or a Python without the
function, the lines are left out.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MallocArena", "PyArenas", "allocator_lines", "malloc_arenas", "pymalloc_arenas"]

PAGE = 4096
"""Free chunks smaller than this hold no whole page ``malloc_trim`` could return."""
_MIB = 2**20


@dataclass(frozen=True, slots=True)
class MallocArena:
    size: int
    """Bytes the arena has from the system (``system current``)."""
    free: int
    free_chunks: int
    free_under_page: int
    """Bytes of ``free`` in chunks smaller than a page."""


@dataclass(frozen=True, slots=True)
class PyArenas:
    arenas: int
    arena_bytes: int
    in_use: int
    """Bytes in allocated blocks."""
    reclaimed: int
    """Arenas given back to the system since start."""


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.open_memstream.restype = ctypes.c_void_p
        libc.open_memstream.argtypes = [
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_size_t),
        ]
        libc.fclose.argtypes = [ctypes.c_void_p]
        libc.free.argtypes = [ctypes.c_void_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    except (OSError, AttributeError):
        return None
    return libc


def _written(libc: ctypes.CDLL, write: Callable[[int], object]) -> str:
    """What ``write`` prints to a C ``FILE``, as text."""
    buffer, size = ctypes.c_void_p(), ctypes.c_size_t()
    stream = libc.open_memstream(ctypes.byref(buffer), ctypes.byref(size))
    if not stream:
        return ""
    try:
        write(stream)
    finally:
        libc.fclose(stream)
    try:
        return ctypes.string_at(buffer, size.value).decode("ascii", "replace")
    finally:
        libc.free(buffer)


def malloc_arenas() -> list[MallocArena] | None:
    """Each of malloc's arenas, main first; None without glibc."""
    libc = _libc()
    if libc is None:
        return None
    text = _written(libc, lambda stream: libc.malloc_info(0, stream))
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None
    return [_arena(heap) for heap in root.iter("heap")]


def _arena(heap: ElementTree.Element) -> MallocArena:
    size = free = chunks = small = 0
    for element in heap:
        if element.tag == "system" and element.get("type") == "current":
            size = int(element.get("size", "0"))
        elif element.tag == "total" and element.get("type") in ("fast", "rest"):
            free += int(element.get("size", "0"))
            chunks += int(element.get("count", "0"))
    for element in heap.iterfind("sizes/*"):
        if int(element.get("to", "0")) < PAGE:
            small += int(element.get("total", "0"))
    return MallocArena(size, free, chunks, small)


_PY_FIELDS = {
    "arenas": re.compile(r"^# arenas allocated current\s*=\s*([0-9,]+)", re.MULTILINE),
    "arena_bytes": re.compile(r"^\d+ arenas \* \d+ bytes/arena\s*=\s*([0-9,]+)", re.MULTILINE),
    "in_use": re.compile(r"^# bytes in allocated blocks\s*=\s*([0-9,]+)", re.MULTILINE),
    "reclaimed": re.compile(r"^# arenas reclaimed\s*=\s*([0-9,]+)", re.MULTILINE),
}


def pymalloc_arenas() -> PyArenas | None:
    """pymalloc's arenas; None if this Python does not report them."""
    libc = _libc()
    try:
        report = ctypes.pythonapi._PyObject_DebugMallocStats
    except AttributeError:
        return None
    if libc is None:
        return None
    # A PyDLL function: called holding the GIL, as pymalloc requires.
    report.argtypes = [ctypes.c_void_p]
    report.restype = ctypes.c_int
    text = _written(libc, report)
    values = {}
    for name, pattern in _PY_FIELDS.items():
        match = pattern.search(text)
        if match is None:
            return None
        values[name] = int(match[1].replace(",", ""))
    return PyArenas(**values)


def allocator_lines() -> list[str]:
    """Report lines: malloc's arenas one by one, then pymalloc's."""
    lines = []
    arenas = malloc_arenas()
    if arenas:
        lines.append(
            f"# malloc {len(arenas)} arenas, free space in chunks under a page cannot be "
            "returned (fragmentation); in use = size - free"
        )
        lines.extend(
            f"#   arena {index}: {arena.size / _MIB:.1f} MiB, {arena.free / _MIB:.1f} MiB free "
            f"in {arena.free_chunks} chunks, {arena.free_under_page / _MIB:.1f} MiB of it "
            "in chunks under a page"
            for index, arena in enumerate(arenas)
        )
    python = pymalloc_arenas()
    if python is not None:
        lines.append(
            f"# pymalloc {python.arenas} arenas ({python.arena_bytes / _MIB:.1f} MiB), "
            f"{python.in_use / _MIB:.1f} MiB in objects, {python.reclaimed} arenas "
            "given back since start"
        )
    return lines
