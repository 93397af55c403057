"""Reading the one slot file the oracle needs: `.ack-watermark` (docs/FORMAT.md §3).

    0               64                4096              4160               8192
    +---------------+----- zero ------+-----------------+------ zero ------+
    | record (A)    |                 | record (B)      |                  |
    +---------------+-----------------+-----------------+------------------+

    record:  0 magic "AKW1" | 4 u32 version 1 | 8 i64 generation | 16 i64 fsn |
             ... zero ... | 60 u32 crc32c over bytes [0, 60)

The valid record with the higher generation wins; none valid means absent.

The Java client's 16-byte form (what qsf creates by default,
sf_ack_watermark_form=java16):

    0 magic "AKW1" | 4 four zero bytes | 8 i64 fsn | 16

A value needs the magic, the zeros and fsn >= -1; otherwise it is absent."""

import os
import struct

WATERMARK_SIZE = 8192
JAVA_FORM_SIZE = 16
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


def _java_form(data):
    """The fsn of the 16-byte form, or None."""
    if data[:8] != b"AKW1\0\0\0\0":
        return None
    (fsn,) = struct.unpack_from("<q", data, 8)
    return fsn if fsn >= -1 else None


def read_watermark(slot_dir):
    """The acknowledged FSN persisted in <slot_dir>/.ack-watermark (either
    form), or None when the file is missing, has another size or holds no
    valid value."""
    path = os.path.join(slot_dir, ".ack-watermark")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    if len(data) == JAVA_FORM_SIZE:
        return _java_form(data)
    if len(data) != WATERMARK_SIZE:
        return None
    best = None
    for off in RECORD_OFFSETS:
        r = _record(data[off:off + 64])
        if r and (best is None or r[0] > best[0]):
            best = r
    return best[1] if best else None
