"""The verdict of one trial: the journal's flushes (journal.py) against the
rows the sink committed, in commit order (its --append file), and the
watermark each killed producer left on disk. Definitions: docs/RELIABILITY.md.

Counts, all in rows (ids):
    lost                ids of flushes that returned OK that were never committed
    ghost_rows          distinct committed ids that no flush named, whose flush
                        failed, or that belong to an in-doubt flush committed
                        only in part
    reordered           committed ids whose first commit comes before the first
                        commit of a smaller id (ids grow in flush order)
    dups                commits beyond the first of an id (at-least-once)
    dups_outside_window commits of an id after the kill before which its flush
                        was acknowledged and persisted in .ack-watermark
    premature_acks      ids persisted as acknowledged before a kill whose first
                        commit came after that kill
    corrupt             committed rows whose values differ from what the
                        producer wrote for that id

and bad_positions: source positions an open reported that are not those of
the last flush that survived the kill before it (positions.py)."""

import bisect
import json
import re
from collections import Counter

from . import positions

TS_BASE_US = 1700000000000000
FAILURES = ("lost", "ghost_rows", "reordered", "dups_outside_window", "premature_acks",
            "corrupt", "bad_positions")


def expected_values(i):
    """The values crash_producer.c writes for id i (row_values there)."""
    pool = 1 + i // 64
    sym = "s%d" % (((i * 2654435761) & 0xFFFFFFFFFFFFFFFF) % pool)
    var = "v%d-" % i + "x" * ((i * 31) % 97)
    return {"s": sym, "v": var, "timestamp": str(TS_BASE_US + i)}


ROW_ID = re.compile(rb'"id": *"(\d+)"')


def expected_line(i, want):
    """The line the sink writes for id i with the producer's column order."""
    return ('{"table":"t","s":"%s","id":"%d","v":"%s","timestamp":"%s"}\n' % (
        want["s"], i, want["v"], want["timestamp"])).encode()


def _row_ok(raw, i, want):
    if raw == expected_line(i, want):
        return True
    row = json.loads(raw)  # another column order, or wrong values
    return row.get("table") == "t" and all(row.get(k) == v for k, v in want.items())


def read_rows(path):
    """Committed ids in file order, and the number of lines that are not a row
    of t with the values its id says."""
    ids, corrupt = [], 0
    with open(path, "rb") as f:
        for raw in f:
            m = ROW_ID.search(raw)
            try:
                i = int(m.group(1))
                ok = _row_ok(raw, i, expected_values(i))
            except (AttributeError, ValueError):
                ok, i = False, None  # not a row at all (a torn line would be one)
            if i is not None:
                ids.append(i)
            corrupt += not ok
    return ids, corrupt


class _Index:
    """id -> flush, by the flushes' first ids."""

    def __init__(self, flushes):
        self.flushes = sorted(flushes, key=lambda f: f.first)
        self.starts = [f.first for f in self.flushes]

    def flush_of(self, i):
        k = bisect.bisect_right(self.starts, i) - 1
        if k >= 0 and i <= self.flushes[k].last:
            return self.flushes[k]
        return None


def _positions(ids):
    first, copies = {}, {}
    for pos, i in enumerate(ids):
        if i in first:
            copies.setdefault(i, [first[i]]).append(pos)
        else:
            first[i] = pos
    return first, copies


def _ghosts(j, index, counts, v, details):
    for i in counts:
        f = index.flush_of(i)
        if f is None or f.state == "failed":
            v["ghost_rows"] += 1
            if len(details) < 20:
                details.append("id %d committed: %s" % (
                    i, f.describe() if f else "no flush named it"))
    for f in j.flushes:
        if f.state != "in_doubt":
            continue
        n = sum(1 for i in range(f.first, f.last + 1) if i in counts)
        v["in_doubt_flushes"] += 1
        v["in_doubt_published"] += bool(f.frames)
        if n == f.rows:
            v["in_doubt_all"] += 1
        elif n > 0:
            v["in_doubt_partial"] += 1
            v["ghost_rows"] += n
            details.append("%s, %s frames in the ring: %d of %d rows committed%s" % (
                f.describe(), "?" if f.frames is None else f.frames, n, f.rows,
                "" if f.code is None else " (after an error: see docs/RELIABILITY.md)"))


def _lost(j, counts, v, details):
    for f in j.flushes:
        if f.state != "ok":
            continue
        missing = [i for i in range(f.first, f.last + 1) if i not in counts]
        v["lost"] += len(missing)
        if missing:
            details.append("%s: %d rows never committed, first %d" % (
                f.describe(), len(missing), missing[0]))


def _reordered(ids, v, details):
    seen, firsts = set(), []
    for i in ids:
        if i not in seen:
            seen.add(i)
            firsts.append(i)
    low = None
    for pos in range(len(firsts) - 1, -1, -1):
        i = firsts[pos]
        if low is not None and low < i:
            v["reordered"] += 1
            if v["reordered"] == 1:
                details.append("id %d first committed before id %d" % (i, low))
        low = i if low is None else min(low, i)


def _covering_kill(f, kills, epoch_of):
    """The first kill before which flush f was acknowledged and persisted."""
    for k in kills:
        w = k["watermark"]
        if w is not None and epoch_of.get(k["producer"]) == f.epoch and f.fsn <= w:
            return k
    return None


def _window(j, kills, first, copies, v, details):
    for f in j.flushes:
        if f.state != "ok":
            continue
        k = _covering_kill(f, kills, j.epoch_of)
        if k is None:
            continue
        for i in range(f.first, f.last + 1):
            if i not in first:
                continue
            late = sum(1 for p in copies.get(i, [first[i]]) if p >= k["lines"])
            if first[i] >= k["lines"]:
                v["premature_acks"] += 1
                late -= 1
            v["dups_outside_window"] += late
            if late and v["dups_outside_window"] == late:
                details.append("id %d of %s committed again after %s was killed with "
                               "watermark %d" % (i, f.describe(), k["producer"], k["watermark"]))


def judge(j, ids, corrupt, kills, trial=None):
    """kills: [{"producer", "watermark" (FSN or None), "lines" (rows in the
    sink's file once the producer was dead), "kind" (optional)}] in kill
    order; trial: its number, for the position failures' details."""
    v = Counter({k: 0 for k in FAILURES + ("in_doubt_flushes", "in_doubt_published",
                                           "in_doubt_all", "in_doubt_partial",
                                           "position_checks", "positions_in_doubt")})
    v["corrupt"] = corrupt
    details = []
    counts = Counter(ids)
    first, copies = _positions(ids)
    index = _Index(j.flushes)
    _lost(j, counts, v, details)
    _ghosts(j, index, counts, v, details)
    _reordered(ids, v, details)
    _window(j, kills, first, copies, v, details)
    positions.check(j, counts, kills, v, details, trial)
    v["dups"] = len(ids) - len(counts)
    v["flushes"] = len(j.flushes)
    v["flush_errors"] = sum(1 for f in j.flushes if f.code not in (None, 0))
    v["rows"] = sum(f.rows for f in j.flushes if f.state == "ok")
    v["committed_rows"] = len(ids)
    v["split_flushes"] = sum(1 for f in j.flushes if f.frames is not None and f.frames > 1)
    v["journal_garbage"] = j.garbage
    return dict(v), details
