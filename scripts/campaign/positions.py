"""The source positions each open reported (journal.Positions) against what
survived the kill before it (docs/RELIABILITY.md, docs/DURABILITY.md §9a).

Every flush carries its last id as its position. A kill is not a power loss,
so the published position an open reports must be exactly that of the last
flush begun before the open whose frames survived in the slot. A flush
survived when all of its rows reach the sink: an ok flush must (else it is
lost), an in-doubt one does all or nothing, and a cut one never does (a row is
sent only once its flush's committing frame is in the ring, which a kill
keeps). Counted as `bad_positions`, one per broken rule:

    the published position is not one crash-producer wrote, names no flush
    begun before the open, or names a flush that failed
    it names a flush whose rows did not all reach the sink (frames cut)
    it is older than a flush that survived: an ok flush, or an in-doubt one
    whose rows all reached the sink (none at all counts as oldest)
    the acknowledged position breaks the first rule, or names a later flush
    than the published one (or there is one and no published one)"""


def _kill_before(kills, producer):
    """The kill the open of `producer` came after: the kill of the producer
    before it (the drain comes after the last kill)."""
    names = [k["producer"] for k in kills]
    at = names.index(producer) if producer in names else len(names)
    return kills[at - 1] if at > 0 else None


def _after(k):
    if k is None:
        return "before any kill"
    return "after the kill of %s%s" % (k["producer"], " (%s)" % k["kind"] if "kind" in k else "")


def _survived(f, counts):
    return f.state != "failed" and all(i in counts for i in range(f.first, f.last + 1))


def _named(pos, before, by_last, what):
    """(the flush pos names, or None; what is wrong with it, or None)."""
    if pos is None:
        return None, None
    if not isinstance(pos, int):
        return None, "%s position %s is not one crash-producer wrote" % (what, pos)
    f = by_last.get(pos)
    if f is None:
        return None, "%s position %d names no flush" % (what, pos)
    if f.index >= before:
        return None, "%s position %d names %s, begun after this open" % (what, pos, f.describe())
    if f.state == "failed":
        return f, "%s position %d names %s, which failed" % (what, pos, f.describe())
    return f, None


def _problems(p, j, counts, by_last):
    before = j.flushes[:p.flushes_before]
    survivors = [f for f in before if _survived(f, counts)]
    pub, bad_pub = _named(p.published, p.flushes_before, by_last, "the published")
    acked, bad_acked = _named(p.acked, p.flushes_before, by_last, "the acknowledged")
    out = [x for x in (bad_pub, bad_acked) if x]
    if pub is not None and not bad_pub and not _survived(pub, counts):
        out.append("it names %s, whose rows did not all reach the sink: its frames were cut"
                   % pub.describe())
    if survivors and not bad_pub and (pub is None or pub.index < survivors[-1].index):
        out.append("it is older than %s, which survived (all of its rows reached the sink)"
                   % survivors[-1].describe())
    if p.acked is not None and not bad_acked and not bad_pub and (
            pub is None or acked.index > pub.index):
        out.append("the acknowledged position is ahead of the published one")
    return out


def check(j, counts, kills, v, details, trial=None):
    """Adds bad_positions, position_checks and positions_in_doubt (published
    positions that name an in-doubt flush: a kill inside a flush whose frames
    survived) to v, and a line per broken rule to details."""
    by_last = {f.last: f for f in j.flushes}
    for p in j.positions:
        v["position_checks"] += 1
        named = by_last.get(p.published) if isinstance(p.published, int) else None
        v["positions_in_doubt"] += bool(named and named.state == "in_doubt")
        k = _kill_before(kills, p.producer)
        for problem in _problems(p, j, counts, by_last):
            v["bad_positions"] += 1
            details.append("%s%s: %s opened with source position %s (fsn %d), acknowledged "
                           "%s (fsn %d): %s" % (
                               "" if trial is None else "trial %d, " % trial,
                               _after(k), p.producer,
                               "none" if p.published is None else p.published, p.pub_fsn,
                               "none" if p.acked is None else p.acked, p.acked_fsn, problem))
