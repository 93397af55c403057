"""The producers' journal (tests/campaign/crash_producer.c) as flushes.

Every flush gets an index in journal order (all producers of a trial write one
journal, one after another) and a state:

    ok        returned 0
    failed    returned an error without QSF_ERRF_IN_DOUBT: nothing may commit
    in_doubt  no return record (the producer was killed inside it, or before
              the record was written), an error flagged in doubt, or an error
              after which the producer called qsf_close (close flushes the
              rows the failed flush left buffered): all of its rows commit or
              none do

FSNs are only comparable inside one slot lifetime (an "epoch"): a producer
that opens the slot and finds a published FSN below one seen before (the slot
was quarantined and started over) starts a new epoch.

Each successful open is followed by a "positions" record: the source
positions qsf reported (every flush carries the text of its last id), kept
with the number of flushes begun before that open (positions.py checks
them)."""

import re

ERRF_IN_DOUBT = 0x2

BEGIN = re.compile(r"^(\S+) begin flush ids \[(\d+),(\d+)\] rows (\d+) big ([01])(?: us (\d+))?$")
RETURN = re.compile(
    r"^(\S+) flush \[(\d+),(\d+)\] returned (-?\d+) fsn (-?\d+) flags (\d+)(?: us (\d+))?$")
OPEN = re.compile(r"^(\S+) open returned (-?\d+) published (-?\d+) acked (-?\d+)$")
POSITIONS = re.compile(r"^(\S+) positions published (\S+) fsn (-?\d+) acked (\S+) fsn (-?\d+)$")


class Flush:
    def __init__(self, index, producer, first, last, big, epoch, begin_us=None):
        self.index, self.producer, self.begin_us, self.end_us = index, producer, begin_us, None
        self.first, self.last, self.big, self.epoch = first, last, big, epoch
        self.code = None  # no return record
        self.fsn = None
        self.flags = 0
        self.frames = None  # frames it published, when known
        self.closed_after = False  # the producer closed the sender after its error

    @property
    def rows(self):
        return self.last - self.first + 1

    @property
    def state(self):
        if self.code is None:
            return "in_doubt"
        if self.code == 0:
            return "ok"
        return "in_doubt" if self.flags & ERRF_IN_DOUBT or self.closed_after else "failed"

    def describe(self):
        ret = "no return" if self.code is None else "returned %d fsn %d flags %d" % (
            self.code, self.fsn, self.flags)
        return "flush #%d of %s ids [%d,%d] (%s, %s)" % (
            self.index, self.producer, self.first, self.last, ret, self.state)


class Positions:
    """What one producer's open reported: each position is the last id of the
    flush it names (an int), None for none, or the journal's token for bytes
    that are not an id or a failed call."""

    def __init__(self, producer, flushes_before, published, pub_fsn, acked, acked_fsn):
        self.producer, self.flushes_before = producer, flushes_before
        self.published, self.pub_fsn = _position(published), pub_fsn
        self.acked, self.acked_fsn = _position(acked), acked_fsn


def _position(token):
    if token == "none":
        return None
    return int(token) if token.isdigit() else token


class Journal:
    def __init__(self):
        self.flushes = []
        self.opens = {}  # producer -> (code, published, acked)
        self.positions = []  # Positions, in journal order
        self.epoch_of = {}  # producer -> epoch
        self.garbage = 0  # lines that are none of the records (a torn write)

    def producer_flushes(self, producer):
        return [f for f in self.flushes if f.producer == producer]


def _open(j, state, m):
    name, code, pub = m.group(1), int(m.group(2)), int(m.group(3))
    j.opens[name] = (code, pub, int(m.group(4)))
    if code == 0 and pub < state["max_fsn"]:
        state["epoch"] += 1
        state["max_fsn"] = -1
    j.epoch_of[name] = state["epoch"]
    _close_in_doubt(j, state, pub if code == 0 else None)
    state["prev_fsn"] = pub
    state["max_fsn"] = max(state["max_fsn"], pub)


def _close_in_doubt(j, state, published):
    """The frames the previous producer's unfinished flush left in the ring:
    what this open found published beyond that producer's last return."""
    last = state.get("open_flush")
    if last is not None and published is not None and state["prev_fsn"] is not None:
        if j.epoch_of.get(last.producer) == state["epoch"]:
            last.frames = published - state["prev_fsn"]
    state["open_flush"] = None


def _return(j, state, m):
    f = state.get("open_flush")
    a, b = int(m.group(2)), int(m.group(3))
    if f is None or (f.producer, f.first, f.last) != (m.group(1), a, b):
        j.garbage += 1
        return
    f.code, f.fsn, f.flags = int(m.group(4)), int(m.group(5)), int(m.group(6))
    f.end_us = int(m.group(7)) if m.group(7) else None
    if f.code == 0 and state["prev_fsn"] is not None:
        f.frames = f.fsn - state["prev_fsn"]
    state["prev_fsn"] = f.fsn if f.code == 0 else None
    state["max_fsn"] = max(state["max_fsn"], f.fsn)
    state["open_flush"] = None if f.code == 0 else f


def parse(text):
    j = Journal()
    state = {"epoch": 0, "max_fsn": -1, "prev_fsn": None, "open_flush": None}
    for line in text.split("\n"):
        if not line:
            continue
        m = BEGIN.match(line)
        if m:
            f = Flush(len(j.flushes), m.group(1), int(m.group(2)), int(m.group(3)),
                      m.group(5) == "1", j.epoch_of.get(m.group(1), state["epoch"]),
                      int(m.group(6)) if m.group(6) else None)
            j.flushes.append(f)
            state["open_flush"] = f
            continue
        m = RETURN.match(line)
        if m:
            _return(j, state, m)
            continue
        m = OPEN.match(line)
        if m:
            _open(j, state, m)
            continue
        m = POSITIONS.match(line)
        if m:
            j.positions.append(Positions(m.group(1), len(j.flushes), m.group(2),
                                         int(m.group(3)), m.group(4), int(m.group(5))))
            continue
        if line.endswith(" close after error"):
            f = state.get("open_flush")
            if f is not None and f.producer == line.split(" ")[0] and f.code:
                f.closed_after = True
            continue
        if " error category " in line or " idle after " in line or " drained " in line \
                or " close returned " in line:
            continue
        j.garbage += 1
    return j
