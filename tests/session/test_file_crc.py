"""The CRC-32 of a file's first bytes, summed in blocks on two threads: always the one-pass CRC."""

from __future__ import annotations

import os
import random
import zlib
from pathlib import Path

import pytest

from pi_core.session import file_crc
from pi_core.session.file_crc import crc32_combine, prefix_crc, shift_operator


def test_combining_two_sums_gives_the_sum_of_the_joined_bytes() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a, b = rng.randbytes(rng.randrange(0, 200)), rng.randbytes(rng.randrange(0, 200))
        assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)
        assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b), shift_operator(len(b))) == zlib.crc32(a + b)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 640, 1000, 1023])
def test_a_prefix_sums_like_one_pass_at_every_block_boundary(tmp_path: Path, size: int, threads: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_crc, "BLOCK", 64)  # many blocks: both threads take some
    data = random.Random(size).randbytes(1024)
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    verified: list[object] = []
    assert prefix_crc(path, size, verified, threads=threads) == zlib.crc32(data[:size])
    st = os.stat(path)
    identity, checkpoints = verified
    assert identity == (st.st_dev, st.st_ino)
    ends = [min(size, n + 64) for n in range(0, size, 64)]
    assert checkpoints == [(end, zlib.crc32(data[:end])) for end in ends]


def test_a_file_shorter_than_the_prefix_or_missing_has_no_sum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_crc, "BLOCK", 64)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"x" * 300)
    assert prefix_crc(path, 301) is None
    assert prefix_crc(path, 1000) is None  # whole blocks missing too
    assert prefix_crc(tmp_path / "gone.jsonl", 10) is None
    assert prefix_crc(tmp_path, 10) is None  # a folder cannot be read


def test_a_real_sized_file_in_four_mebibyte_blocks(tmp_path: Path) -> None:
    data = random.Random(1).randbytes(3 * file_crc.BLOCK + 12345)
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    verified: list[object] = []
    assert prefix_crc(path, len(data), verified) == zlib.crc32(data)
    assert verified[1][-1] == (len(data), zlib.crc32(data))  # type: ignore[index]
    assert prefix_crc(path, file_crc.BLOCK * 2) == zlib.crc32(data[:file_crc.BLOCK * 2])
