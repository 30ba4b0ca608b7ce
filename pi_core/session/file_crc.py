"""CRC-32 of the first bytes of a file, read and summed in blocks on two threads.

Opening a long session checks that the file still starts with the bytes its index describes: a CRC-32 of
up to hundreds of megabytes, read from the page cache. ``zlib.crc32`` and ``os.preadv`` both release the
GIL, so two threads take every other block and the block sums are chained afterwards with the
CRC-32 combination rule (the sum of ``a + b`` from the sums of ``a`` and ``b`` and the length of ``b``):
about half the time on two cores, the same result as one pass.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable
from typing import Any

BLOCK = 4 << 20
_POLY = 0xEDB88320  # CRC-32's polynomial, bit-reversed, as zlib uses it


def _multiply(a: int, b: int) -> int:
    """``a * b`` modulo the CRC polynomial (bit-reversed polynomials over GF(2), ``a`` non-zero)."""
    mask, product = 1 << 31, 0
    while True:
        if a & mask:
            product ^= b
            if not a & (mask - 1):
                return product
        mask >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


_X_POW_2N = [1 << 30]  # x^(2^n) modulo the polynomial, n = 0..31
for _ in range(31):
    _X_POW_2N.append(_multiply(_X_POW_2N[-1], _X_POW_2N[-1]))


def shift_operator(length: int) -> int:
    """``x^(8 * length)``: what moves a CRC past ``length`` more bytes (see :func:`crc32_combine`)."""
    product, n = 1 << 31, 3  # x^0; a byte is 2^3 bits
    while length:
        if length & 1:
            product = _multiply(_X_POW_2N[n & 31], product)
        length >>= 1
        n += 1
    return product


def crc32_combine(crc1: int, crc2: int, length2: int, operator: int | None = None) -> int:
    """The CRC-32 of ``a + b`` from ``crc1 = crc32(a)``, ``crc2 = crc32(b)`` and ``len(b)``
    (``operator``: :func:`shift_operator` of that length, when it is computed once for many)."""
    return _multiply(shift_operator(length2) if operator is None else operator, crc1) ^ crc2


def prefix_crc(path: Any, size: int, verified: list[Any] | None = None, *, threads: int = 2) -> int | None:
    """CRC-32 of the first ``size`` bytes of ``path`` (``None`` if it has fewer or cannot be read).
    ``verified``, when given, receives the file's ``(device, inode)`` and the ``(offset, crc)`` after
    each block of :data:`BLOCK` bytes. ``threads=1`` sums on the calling thread alone (one that runs
    beside other work already)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if verified is not None:
            st = os.fstat(fd)
            verified[:] = [(st.st_dev, st.st_ino), []]
        sums = _block_sums(fd, size, threads)
    except OSError:
        return None
    finally:
        os.close(fd)
    if sums is None:
        return None
    crc, checkpoints, full = 0, [], shift_operator(BLOCK)
    for n, block_crc in enumerate(sums):
        length = min(BLOCK, size - n * BLOCK)
        crc = crc32_combine(crc, block_crc, length, full if length == BLOCK else None)
        checkpoints.append((n * BLOCK + length, crc))
    if verified is not None:
        verified[1] = checkpoints
    return crc


def _block_sums(fd: int, size: int, threads: int = 2) -> list[int] | None:
    """The CRC-32 of each block of the first ``size`` bytes, on two threads when there are several
    blocks and cores; ``None`` when the file is shorter."""
    count = (size + BLOCK - 1) // BLOCK
    sums: list[int | None] = [None] * count
    failures: list[BaseException] = []

    def work(first: int, step: int) -> None:
        buffer = memoryview(bytearray(min(BLOCK, max(size, 1))))
        read = _reader(fd)
        try:
            for n in range(first, count, step):
                length = min(BLOCK, size - n * BLOCK)
                if read(buffer[:length], n * BLOCK) != length:
                    return  # shorter than ``size``: its sum stays None
                sums[n] = zlib.crc32(buffer[:length])
        except OSError as exc:
            failures.append(exc)
        finally:
            buffer.release()

    if threads > 1 and count > 1 and (os.cpu_count() or 1) > 1 and hasattr(os, "preadv"):
        helper = threading.Thread(target=work, args=(1, 2), name="pi-file-crc", daemon=True)
        helper.start()
        work(0, 2)
        helper.join()
    else:
        work(0, 1)
    if failures:
        raise failures[0]
    if any(s is None for s in sums):
        return None
    return sums  # type: ignore[return-value]


def _reader(fd: int) -> Callable[[memoryview, int], int]:
    """Read into a buffer at an offset, filling it unless the file ends first; returns the count."""
    positional = hasattr(os, "preadv")

    def read(buffer: memoryview, offset: int) -> int:
        done = 0
        while done < len(buffer):
            if positional:
                got = os.preadv(fd, [buffer[done:]], offset + done)
            else:  # without positional reads there is one thread: the descriptor's position is ours
                os.lseek(fd, offset + done, os.SEEK_SET)
                got = os.readv(fd, [buffer[done:]])
            if not got:
                break
            done += got
        return done
    return read
