#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_recover_slot (fuzz/corpus/recover_slot/) from
the golden slot files in tests/golden/: whole slots of 1..4 segments, with and
without manifest, watermark and .symbol-dict. The input layout is described at
the top of fuzz/targets/fuzz_recover_slot.c. Run from the repository root."""
import hashlib
import os
import struct

G = "tests/golden/"
OUT = "fuzz/corpus/recover_slot/"


def golden(name):
    with open(G + name) as f:
        return bytes.fromhex("".join(f.read().split()))


SEG = golden("qsf-two-frame.sfa.hex")  # baseSeq 42, frames "one", "two-two"
TORN = golden("qsf-two-frame-torn-tail.sfa.hex")
DICT = golden("qsf-two-chunk.symbol-dict.hex")
DICT_TORN = golden("qsf-two-chunk-torn-tail.symbol-dict.hex")


def rebased(seg, base, flags=None, size=None):
    """The segment with another baseSeq (and flags), zero-filled to size."""
    b = bytearray(seg) + bytes((size or len(seg)) - len(seg))
    b[8:16] = struct.pack("<q", base)
    if flags is not None:
        b[5] = flags
    return bytes(b)


# the empty commit (docs/FORMAT.md §2.6), a QWP message recovery can resynchronise on
EMPTY_COMMIT = bytes.fromhex("51575031010800000200000000000000")[:14]


def qwp_segment(base, frames, size):
    """A segment of `frames` empty commits; CRCs are left zero (the seed sets
    the fix byte so the target computes them)."""
    body = (struct.pack("<II", 0, len(EMPTY_COMMIT)) + EMPTY_COMMIT) * frames
    return rebased(SEG[:24] + body, base, size=size)


def chunk(b):
    return struct.pack("<H", len(b)) + b


def image(rec_a, rec_b):
    img = bytearray(8192)
    img[0:64] = rec_a or bytes(64)
    img[4096:4160] = rec_b or bytes(64)
    return bytes(img)


def slot(segs, manifest=None, watermark=None, dict_=None, initial=True, raw=False):
    """segs: (fix, bytes); manifest/watermark: list of record tuples, or the
    raw file when raw is set."""
    h = (len(segs) - 1) | (4 if manifest else 0) | (8 if watermark else 0)
    h |= (16 if dict_ else 0) | (32 if initial else 0) | (64 if raw else 0)
    out = bytes([h])
    for fix, b in segs:
        out += bytes([fix]) + chunk(b)
    for recs in (manifest, watermark):
        if not recs:
            continue
        if raw:
            out += chunk(recs)
            continue
        which = sum(1 << i for i, r in enumerate(recs) if r)
        out += bytes([which])
        for r in recs:
            if r:
                out += struct.pack("<" + "q" * len(r), *r)
    if dict_:
        out += chunk(dict_)
    return out


SEEDS = {
    "one-segment": slot([(0, SEG)]),
    "two-segments-manifest-watermark-dict": slot(
        [(0, SEG), (0, rebased(SEG, 44, 1))],
        manifest=[None, (1, 42, 44)], watermark=[None, (1, 42)], dict_=DICT),
    "three-segments-torn-middle": slot(
        [(0, rebased(SEG, 42, 1)), (0, rebased(TORN, 44, 1)), (0, rebased(SEG, 46, 1))],
        manifest=[(2, 42, 46), (1, 42, 44)], dict_=DICT_TORN),
    "four-segments-fsn-gap": slot(
        [(0, SEG), (0, rebased(SEG, 44, size=256)), (0, rebased(SEG, 50)), (0, rebased(SEG, 52))],
        watermark=[(2, 43), None], initial=False),
    # a sealed segment of four QWP frames, the second one's length destroyed
    "sealed-unknown-gap": slot(
        [(1 | 2 | (2 << 2), qwp_segment(42, 4, 160)), (1, qwp_segment(46, 2, 160))],
        watermark=[None, (1, 41)]),
    "two-segments-no-manifest-required": slot(
        [(0, rebased(SEG, 42, 1)), (0, rebased(SEG, 44, 1))]),
    "raw-golden-records": slot(
        [(0, rebased(SEG, 0)), (0, rebased(SEG, 2, size=128)), (0, rebased(SEG, 5))],
        manifest=image(golden("qsf-manifest-gen2.hex"), golden("qsf-manifest-gen1.hex")),
        watermark=image(golden("qsf-ack-watermark-gen2.hex"),
                        golden("qsf-ack-watermark-gen1.hex")),
        dict_=DICT, raw=True),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(OUT + "seed-" + name, "wb") as f:
        f.write(data)
