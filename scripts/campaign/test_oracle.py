#!/usr/bin/env python3
"""The crash campaign's oracle on made-up journals and sink files: each kind
of failure it must report, and the at-least-once duplicates it must allow.
Run: python3 scripts/campaign/test_oracle.py"""

import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from campaign import journal, oracle, slotfiles  # noqa: E402

OPEN = "p1 open returned 0 published -1 acked -1\n"


def flush(a, b, code=0, fsn=None, flags=0, who="p1", big=0):
    text = "%s begin flush ids [%d,%d] rows %d big %d\n" % (who, a, b, b - a + 1, big)
    if fsn is not None:
        text += "%s flush [%d,%d] returned %d fsn %d flags %d\n" % (who, a, b, code, fsn, flags)
    return text


TWO_OK = OPEN + flush(1, 3, fsn=0) + flush(4, 6, fsn=1)


def judge(text, ids, kills=(), corrupt=0):
    return oracle.judge(journal.parse(text), list(ids), corrupt, list(kills))[0]


def kill(w, lines, who="p1"):
    return {"producer": who, "watermark": w, "lines": lines}


def opened(who, pub="none", acked="none", pub_fsn=-1, acked_fsn=-1):
    """The open and positions records of a producer that reopened the slot."""
    return "%s open returned 0 published %d acked %d\n%s positions published %s fsn %d " \
           "acked %s fsn %d\n" % (who, pub_fsn, acked_fsn, who, pub, pub_fsn, acked, acked_fsn)


# p1: two ok flushes (last ids 3 and 6), killed inside a third ([7,9]); p2 opens
KILLED_IN_FLUSH = opened("p1") + flush(1, 3, fsn=0) + flush(4, 6, fsn=1) + flush(7, 9)
P1_KILLED = [kill(None, 9, "p1")]


def positions(text, ids, kills=P1_KILLED):
    """bad_positions, position_checks and the details of a run."""
    v, details = oracle.judge(journal.parse(text), list(ids), 0, list(kills), trial=4)
    return v["bad_positions"], v["position_checks"], details


class Positions(unittest.TestCase):
    def test_the_last_surviving_flush_passes(self):
        cut = KILLED_IN_FLUSH + opened("p2", "6", "3", 1, 0)
        self.assertEqual(positions(cut, range(1, 7))[:2], (0, 2))
        kept = KILLED_IN_FLUSH + opened("p2", "9", "6", 2, 1)
        self.assertEqual(positions(kept, range(1, 10))[:2], (0, 2))

    def test_a_position_at_the_first_open(self):
        self.assertEqual(positions(opened("p1", "3") + flush(1, 3, fsn=0), range(1, 4), [])[0], 1)

    def test_a_flush_that_was_cut(self):
        bad, _, details = positions(KILLED_IN_FLUSH + opened("p2", "9", "6", 2, 1), range(1, 7))
        self.assertEqual(bad, 1)
        self.assertIn("trial 4, after the kill of p1", details[-1])
        self.assertIn("p2 opened with source position 9 (fsn 2), acknowledged 6", details[-1])
        self.assertIn("frames were cut", details[-1])

    def test_older_than_the_last_ok_flush(self):
        bad, _, details = positions(KILLED_IN_FLUSH + opened("p2", "3", "3", 0, 0), range(1, 7))
        self.assertEqual(bad, 1)
        self.assertIn("older than flush #1", details[-1])
        self.assertEqual(positions(KILLED_IN_FLUSH + opened("p2"), range(1, 7))[0], 1)

    def test_older_than_an_in_doubt_flush_that_survived(self):
        text = KILLED_IN_FLUSH + opened("p2", "6", "6", 1, 1)
        self.assertEqual(positions(text, range(1, 10))[0], 1)

    def test_a_flush_begun_after_the_open(self):
        text = opened("p1") + flush(1, 3, fsn=0) + opened("p2", "6") + flush(4, 6, fsn=1, who="p2")
        bad, _, details = positions(text, range(1, 7), [kill(None, 3, "p1")])
        self.assertEqual(bad, 1)
        self.assertIn("names flush #1 of p2 ids [4,6]", details[-1])
        self.assertIn("begun after this open", details[-1])

    def test_a_flush_that_failed(self):
        text = opened("p1") + flush(1, 3, fsn=0) + flush(4, 6, code=-8, fsn=0) + \
            opened("p2", "6", "3", 0, 0)
        bad, _, details = positions(text, range(1, 4))
        self.assertEqual(bad, 1)
        self.assertIn("which failed", details[-1])

    def test_bytes_that_are_no_position(self):
        text = opened("p1") + flush(1, 3, fsn=0) + opened("p2", "bad:ff00", "3", 0, 0)
        self.assertEqual(positions(text, range(1, 4))[0], 1)
        text = opened("p1") + flush(1, 3, fsn=0) + opened("p2", "17", "3", 0, 0)
        self.assertEqual(positions(text, range(1, 4))[0], 1)

    def test_acknowledged_ahead_of_published(self):
        bad, _, details = positions(KILLED_IN_FLUSH + opened("p2", "6", "9", 1, 2), range(1, 7))
        self.assertEqual(bad, 1)
        self.assertIn("ahead of the published", details[-1])
        bad, _, details = positions(KILLED_IN_FLUSH + opened("p2", "9", "12"), range(1, 10))
        self.assertEqual(bad, 1)
        self.assertIn("the acknowledged position 12 names no flush", details[-1])

    def test_position_failures_fail_the_trial(self):
        v = judge(KILLED_IN_FLUSH + opened("p2", "3"), range(1, 7), P1_KILLED)
        self.assertIn("bad_positions", oracle.FAILURES)
        self.assertEqual(v["bad_positions"], 1)


class Oracle(unittest.TestCase):
    def assertCounts(self, v, **want):
        for k in oracle.FAILURES + ("dups",):
            self.assertEqual(v[k], want.get(k, 0), k)

    def test_clean_run(self):
        self.assertCounts(judge(TWO_OK, range(1, 7)))

    def test_lost_row_of_an_ok_flush(self):
        self.assertCounts(judge(TWO_OK, [1, 2, 3, 5, 6]), lost=1)

    def test_rows_of_a_failed_flush_are_ghosts(self):
        text = OPEN + flush(1, 3, fsn=0) + flush(4, 6, code=-8, fsn=0)
        self.assertCounts(judge(text, range(1, 7)), ghost_rows=3)
        self.assertCounts(judge(text, range(1, 4)))

    def test_failed_flush_flagged_in_doubt_may_commit_whole(self):
        text = OPEN + flush(1, 3, fsn=0) + flush(4, 6, code=-24, fsn=1, flags=2)
        v = judge(text, range(1, 7))
        self.assertCounts(v)
        self.assertEqual(v["in_doubt_all"], 1)

    def test_failed_flush_then_close_is_in_doubt(self):
        text = OPEN + flush(1, 3, fsn=0) + flush(4, 6, code=-8, fsn=0) + \
            "p1 close after error\np1 close returned 0\n"
        self.assertCounts(judge(text, range(1, 7)))
        self.assertCounts(judge(text, range(1, 6)), ghost_rows=2)

    def test_an_id_no_flush_named_is_a_ghost(self):
        self.assertCounts(judge(TWO_OK, list(range(1, 7)) + [99]), ghost_rows=1)

    def test_in_doubt_flush_all_or_nothing(self):
        text = OPEN + flush(1, 3, fsn=0) + flush(4, 6)
        self.assertCounts(judge(text, range(1, 7)))
        self.assertCounts(judge(text, range(1, 4)))
        v = judge(text, [1, 2, 3, 4, 5])
        self.assertCounts(v, ghost_rows=2)
        self.assertEqual(v["in_doubt_partial"], 1)

    def test_reordered_commits(self):
        self.assertCounts(judge(TWO_OK, [1, 2, 3, 5, 4, 6]), reordered=1)
        self.assertCounts(judge(TWO_OK, [4, 5, 6, 1, 2, 3]), reordered=3)

    def test_a_replay_is_not_a_reorder(self):
        self.assertCounts(judge(TWO_OK, [1, 2, 3, 4, 5, 6, 4, 5, 6]), dups=3)

    def test_duplicates_inside_the_window_are_allowed(self):
        ids = [1, 2, 3, 1, 2, 3, 4, 5, 6]
        self.assertCounts(judge(TWO_OK, ids, [kill(-1, 3)]), dups=3)
        self.assertCounts(judge(TWO_OK, ids, [kill(None, 3)]), dups=3)

    def test_duplicates_of_acknowledged_rows_after_the_kill(self):
        ids = [1, 2, 3, 1, 2, 3, 4, 5, 6]
        self.assertCounts(judge(TWO_OK, ids, [kill(0, 3)]), dups=3, dups_outside_window=3)
        self.assertCounts(judge(TWO_OK, ids, [kill(0, 6)]), dups=3)

    def test_acknowledged_before_the_kill_but_committed_after(self):
        self.assertCounts(judge(TWO_OK, range(1, 7), [kill(1, 3)]), premature_acks=3)

    def test_watermarks_of_another_slot_lifetime_do_not_apply(self):
        # p2 found the slot empty (quarantined and started over): FSN 0 again
        text = OPEN + flush(1, 3, fsn=0) + "p2 open returned 0 published -1 acked -1\n" + \
            flush(4, 6, fsn=0, who="p2")
        ids = [1, 2, 3, 4, 5, 6, 1, 2, 3]
        self.assertCounts(judge(text, ids, [kill(-1, 3), kill(0, 6, "p2")]), dups=3)
        self.assertCounts(judge(text, ids, [kill(0, 3), kill(0, 6, "p2")]), dups=3,
                          dups_outside_window=3)

    def test_frames_per_flush(self):
        text = "p1 open returned 0 published 10 acked 10\n" + flush(1, 3, fsn=13) + \
            flush(4, 6, fsn=14) + flush(7, 9) + "p2 open returned 0 published 16 acked 14\n"
        j = journal.parse(text)
        self.assertEqual([f.frames for f in j.flushes], [3, 1, 2])
        self.assertEqual(oracle.judge(j, list(range(1, 10)), 0, [])[0]["split_flushes"], 2)

    def test_rows_with_wrong_values_are_corrupt(self):
        w = {i: oracle.expected_values(i) for i in (1, 2, 3)}
        lines = [
            oracle.expected_line(1, w[1]).decode(),  # as the sink writes it
            json.dumps(dict(w[2], id="2", table="t")) + "\n",  # other order and spacing
            oracle.expected_line(3, dict(w[3], v="v3-")).decode(),  # a wrong value
            '{"table":"t","s":"{"table"\n',  # a torn line
        ]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("".join(lines))
        try:
            ids, corrupt = oracle.read_rows(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual((ids, corrupt), ([1, 2, 3], 2))

class Watermark(unittest.TestCase):
    """The watermark a killed producer left, in either form qsf writes."""

    def read(self, data):
        with tempfile.TemporaryDirectory() as d:
            if data is not None:
                with open(os.path.join(d, ".ack-watermark"), "wb") as f:
                    f.write(data)
            return slotfiles.read_watermark(d)

    def test_java_form(self):
        self.assertEqual(self.read(bytes.fromhex("414B573100000000" "1300000000000000")), 19)
        self.assertIsNone(self.read(bytes(16)))  # created, no value yet
        self.assertIsNone(self.read(bytes.fromhex("414B573101000000" "1300000000000000")))

    def test_dual_form(self):
        rec = bytearray(64)
        rec[0:4] = b"AKW1"
        rec[4:8] = (1).to_bytes(4, "little")
        rec[8:16] = (3).to_bytes(8, "little")
        rec[16:24] = (41).to_bytes(8, "little")
        rec[60:64] = slotfiles.crc32c(bytes(rec[:60])).to_bytes(4, "little")
        img = bytearray(8192)
        img[4096:4160] = rec
        self.assertEqual(self.read(bytes(img)), 41)
        self.assertIsNone(self.read(bytes(8192)))
        self.assertIsNone(self.read(bytes(24)))
        self.assertIsNone(self.read(None))


if __name__ == "__main__":
    unittest.main(verbosity=2)
