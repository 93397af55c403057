#!/usr/bin/env python3
"""NumPy arrays into QuestDB through qsf's chunk API, from Python without a binding.

The chunk calls take columns in the memory layout NumPy already has (one
contiguous buffer of int64, float64, bool, ...), so ctypes hands qsf the
arrays' own buffers: nothing is copied on the way in. The arrays must stay
alive and unchanged until qsf_flush_chunk has returned.

    numpy_ctypes.py CONF [path/to/libqsf.so]

Publishes N rows into table "readings": id (LONG), temp (DOUBLE, NaN-free,
masked rows null), ok (BOOLEAN), site (SYMBOL, from category codes), vec
(DOUBLE[3] array per row) and the designated timestamp (nanoseconds).
"""
import ctypes
import ctypes.util
import sys

import numpy as np

N = 1000
QSF_UNIT_NANOS = 3


class ErrInfo(ctypes.Structure):
    """qsf_errinfo (include/qsf.h)."""
    _fields_ = [("code", ctypes.c_int), ("flags", ctypes.c_uint),
                ("sys_errno", ctypes.c_int), ("msg", ctypes.c_char * 512)]


def load(path):
    lib = ctypes.CDLL(path or ctypes.util.find_library("qsf") or "libqsf.so")
    p, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    err = ctypes.POINTER(ErrInfo)
    col = [p, ctypes.c_char_p, sz]  # chunk, column name, its length
    tail = [p, sz, sz, err]         # validity, offset, rows, err
    sigs = {
        "qsf_sender_new": [ctypes.c_char_p, sz, ctypes.POINTER(p), err],
        "qsf_close": [p, err],
        "qsf_chunk_new": [ctypes.c_char_p, sz, ctypes.POINTER(p), err],
        "qsf_chunk_free": [p],
        "qsf_chunk_i64": col + [p] + tail,
        "qsf_chunk_f64": col + [p] + tail,
        "qsf_chunk_bool_u8": col + [p] + tail,
        "qsf_chunk_symbol_dict": col + [p, i, p, p, sz] + tail,
        "qsf_chunk_f64_tensor": col + [i, p, p] + tail,
        "qsf_chunk_at": [p, p, i, sz, sz, err],
        "qsf_flush_chunk": [p, p, ctypes.POINTER(ctypes.c_int64), err],
    }
    for name, args in sigs.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = None if name == "qsf_chunk_free" else ctypes.c_int
    return lib


def ptr(a):
    """The array's own buffer (no copy: it must be C-contiguous)."""
    assert a.flags.c_contiguous, "a strided view would need a copy"
    return a.ctypes.data


def check(rc, err, what):
    if rc != 0:
        raise SystemExit(f"{what}: {err.msg.decode(errors='replace')}")


def validity(mask):
    """An Arrow validity bitmap (LSB first, 1 = present) from a NumPy mask."""
    return np.packbits(~mask, bitorder="little")


def main():
    conf = sys.argv[1].encode()
    lib = load(sys.argv[2] if len(sys.argv) > 2 else None)
    err = ErrInfo()

    i = np.arange(N, dtype=np.int64)
    temp = np.ma.masked_array(i * 0.5 - 20.0, mask=(i % 10 == 7))
    ok = (i % 3 == 0)                                  # NumPy bool: one byte per value
    sites = np.array(["north", "south", "east"])
    site_codes = (i % 3).astype(np.int32)              # category codes into `sites`
    site_bytes = "".join(sites).encode()
    site_offs = np.cumsum([0] + [len(s.encode()) for s in sites]).astype(np.int32)
    vec = np.stack([i * 1.0, -i * 1.0, i / 4.0], axis=1)   # shape (N, 3), row-major
    shape = np.array([3], dtype=np.int32)
    ts = (np.datetime64("2023-11-14T22:13:20", "ns") + i * np.timedelta64(1, "ms"))
    ts_ns = ts.view(np.int64)
    temp_data, temp_valid = temp.data, validity(np.ma.getmaskarray(temp))

    sender = ctypes.c_void_p()
    check(lib.qsf_sender_new(conf, len(conf), ctypes.byref(sender), ctypes.byref(err)), err,
          "qsf_sender_new")
    chunk = ctypes.c_void_p()
    check(lib.qsf_chunk_new(b"readings", 8, ctypes.byref(chunk), ctypes.byref(err)), err,
          "qsf_chunk_new")
    e = ctypes.byref(err)
    check(lib.qsf_chunk_i64(chunk, b"id", 2, ptr(i), None, 0, N, e), err, "id")
    check(lib.qsf_chunk_f64(chunk, b"temp", 4, ptr(temp_data), ptr(temp_valid), 0, N, e), err,
          "temp")
    check(lib.qsf_chunk_bool_u8(chunk, b"ok", 2, ptr(ok), None, 0, N, e), err, "ok")
    check(lib.qsf_chunk_symbol_dict(chunk, b"site", 4, ptr(site_codes), 4, ptr(site_offs),
                                    site_bytes, len(sites), None, 0, N, e), err, "site")
    check(lib.qsf_chunk_f64_tensor(chunk, b"vec", 3, 1, ptr(shape), ptr(vec), None, 0, N, e),
          err, "vec")
    check(lib.qsf_chunk_at(chunk, ptr(ts_ns), QSF_UNIT_NANOS, 0, N, e), err, "at")
    fsn = ctypes.c_int64()
    check(lib.qsf_flush_chunk(sender, chunk, ctypes.byref(fsn), e), err, "qsf_flush_chunk")
    lib.qsf_chunk_free(chunk)  # the arrays may go from here on
    check(lib.qsf_close(sender, e), err, "qsf_close")
    print(f"{N} rows acknowledged")


if __name__ == "__main__":
    main()
