"""The seeded plan of one trial (docs/RELIABILITY.md): slot settings, the
producers and the moment each is killed, the sink's misbehaviour. A trial's
plan depends only on (campaign seed, trial number), so `--trial K` replays the
plan of trial K; the moments a kill lands on still depend on timing."""

import random

MASK64 = (1 << 64) - 1


def trial_seed(seed, trial):
    """splitmix64 of the pair: neighbouring trials get unrelated plans."""
    z = (seed * 0x9E3779B97F4A7C15 + trial + 1) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def sink_faults(r):
    """0 to 3 fault lines for one sink process (grammar: docs/QWP-SINK.md).
    Withheld acknowledgements weigh most: a sender that dies while its acks
    are held back leaves the most for the next one to sort out."""
    conn = lambda: r.randint(1, 3)
    menu = [
        (2, lambda: "close=1011:overloaded conn=%d after=%d" % (conn(), r.randint(1, 80))),
        (1, lambda: "close=1001:going_away conn=%d after=%d" % (conn(), r.randint(1, 80))),
        (2, lambda: "rst conn=%d after=%d" % (conn(), r.randint(1, 80))),
        (2, lambda: "rst conn=%d bytes=%d" % (conn(), r.randint(2000, 3000000))),
        (1, lambda: "fin conn=%d after=%d" % (conn(), r.randint(1, 80))),
        (1, lambda: "withhold-ok conn=%d" % conn()),
        (1, lambda: "withhold-ok conn=%d after=%d" % (conn(), r.randint(1, 40))),
        (3, lambda: "withhold-ok conn=%d+" % r.randint(2, 3)),
        (2, lambda: "delay-ok=%d conn=%d+" % (r.randint(5, 150), r.randint(1, 2))),
        (1, lambda: "restart conn=%d after=%d" % (conn(), r.randint(1, 80))),
        (1, lambda: "random=%s:%d conn=%d+" % (r.choice(["0.002", "0.005", "0.01"]),
                                               r.randint(1, 1 << 30), conn())),
    ]
    weights = [w for w, _ in menu]
    n = r.choice([0, 1, 1, 2, 2, 3])
    return [r.choices(menu, weights)[0][1]() for _ in range(n)]


def _producer(r, k):
    kill = r.choices(["delay", "in-flush", "in-big-flush", "mid-publish", "first-flush",
                      "at-open"], [15, 10, 20, 30, 15, 10])[0]
    lo = r.choice([500, 1000, 3000])
    return {
        "name": "p%d" % k,
        "seed": r.randint(1, 1 << 62),
        "big_pct": r.choice([5, 15, 30, 50]),
        "big_rows": (lo, lo * r.choice([2, 3, 4])),
        "small_max": r.choice([20, 200, 600]),
        "pause_us": r.choice([200, 1000, 3000]),
        "close_on_error": r.random() < 0.5,
        "kill": kill,
        "kill_after": r.uniform(0.05, 1.0),  # delay: seconds after the start
        "arm_after": r.uniform(0.0, 0.5),  # in-*flush: ignore begins before this
        "after_begin": r.uniform(0.0, r.choice([0.002, 0.006])),  # in-*flush: after the begin
        "after_first": r.uniform(0.0, 0.01),  # first-flush: after its first flush returned
        "open_kill": r.uniform(0.0, 0.03),  # at-open
        "self_kill": (r.randint(2, 4), r.randint(1, 3)),  # mid-flush: big flush, quarters
        "sink_restart": r.uniform(0.02, 0.8) if r.random() < 0.5 else None,
        "sink_down": r.uniform(0.0, 0.3),
        "faults_after_restart": sink_faults(r),
    }


DURABILITIES = ("memory", "append", "periodic")


def make(seed, trial, durability=None):
    """`durability` forces sf_durability; the draw is still made, so that the
    rest of the plan is the one the seed gives without it."""
    r = random.Random(trial_seed(seed, trial))
    drawn = r.choices(DURABILITIES, [70, 15, 15])[0]
    durability = durability or drawn
    seg = r.choice([65536, 65536, 131072, 262144, 1048576])
    return {
        "trial": trial,
        "seed": trial_seed(seed, trial),
        "durability": durability,
        "sync_interval": r.choice([20, 100, 1000]),
        "segment": seg,
        "total": r.choice([None, None, 4 << 20, 8 << 20, 16 << 20]),
        "max_batch": r.choice([None, None, 65536, 262144]),
        "append_deadline": r.choice([60000, 60000, 60000, 60000, 200, 1000]),
        "faults": sink_faults(r),
        "producers": _producers(r),
    }


def _producers(r):
    """Two to four producers. Half of those that follow a kill inside a flush
    crash-loop: they are killed right after their own first flush, while they
    may still be replaying what their predecessor left (the moment a restarted
    service that keeps dying is in)."""
    ps = [_producer(r, k) for k in range(1, r.randint(2, 4) + 1)]
    for prev, p in zip(ps, ps[1:]):
        if prev["kill"] in ("in-flush", "in-big-flush", "mid-publish") and r.random() < 0.5:
            p["kill"] = "first-flush"
    return ps


def connect_string(plan, port, sf_dir):
    parts = ["ws::addr=127.0.0.1:%d" % port, "sf_dir=%s" % sf_dir, "sender_id=camp",
             "sf_durability=%s" % plan["durability"],
             "sf_max_segment_bytes=%d" % plan["segment"],
             "sf_append_deadline_millis=%d" % plan["append_deadline"], "auto_flush=off",
             "initial_connect_retry=async", "reconnect_initial_backoff_millis=10",
             "reconnect_max_backoff_millis=200", "close_flush_timeout_millis=1000"]
    if plan["durability"] == "periodic":
        parts.append("sf_sync_interval_millis=%d" % plan["sync_interval"])
    if plan["total"]:
        parts.append("sf_max_total_bytes=%d" % plan["total"])
    return ";".join(parts) + ";"
