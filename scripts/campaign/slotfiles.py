"""Reading the one slot file the oracle needs: `.ack-watermark` (docs/FORMAT.md §3).

    0               64                4096              4160               8192
    +---------------+----- zero ------+-----------------+------ zero ------+
    | record (A)    |                 | record (B)      |                  |
    +---------------+-----------------+-----------------+------------------+

    record:  0 magic "AKW1" | 4 u32 version 1 | 8 i64 generation | 16 i64 fsn |
             ... zero ... | 60 u32 crc32c over bytes [0, 60)

The valid record with the higher generation wins; none valid means absent."""

import os
import struct

WATERMARK_SIZE = 8192
RECORD_OFFSETS = (0, 4096)


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _record(rec):
    """(generation, fsn) of one valid record, or None."""
    if len(rec) < 64 or rec[:4] != b"AKW1":
        return None
    version, generation, fsn = struct.unpack_from("<Iqq", rec, 4)
    (crc,) = struct.unpack_from("<I", rec, 60)
    if version != 1 or generation <= 0 or fsn < -1 or crc32c(rec[:60]) != crc:
        return None
    return generation, fsn


def read_watermark(slot_dir):
    """The acknowledged FSN persisted in <slot_dir>/.ack-watermark, or None when
    the file is missing, has another size or holds no valid record."""
    path = os.path.join(slot_dir, ".ack-watermark")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    if len(data) != WATERMARK_SIZE:
        return None
    best = None
    for off in RECORD_OFFSETS:
        r = _record(data[off:off + 64])
        if r and (best is None or r[0] > best[0]):
            best = r
    return best[1] if best else None
