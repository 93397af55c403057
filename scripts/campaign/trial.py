"""Running one trial (plan.py) with real processes: a qwp-sink appending to
one file (killed with SIGKILL and started again on the same port when the plan
says so), the producers one after another on one slot, each SIGKILLed at its
planned moment, then a clean producer that drains the slot. Returns the
oracle's verdict (oracle.py)."""

import os
import re
import signal
import subprocess
import time

from . import journal, oracle, plan as planmod, slotfiles

POLL = 0.0005
PRODUCER_DEADLINE = 2.5  # a planned event that never comes: kill anyway
DRAIN_DEADLINE = 60.0
EXIT_FLUSH_ERROR = 3  # crash-producer: a flush failed (journaled); any other exit is a failure


class Lines:
    """Complete lines of a growing file, read incrementally. It reads on from
    the end of the last complete line, so a torn last line that a restarted
    sink cuts off (and writes over) is read again as it becomes."""

    def __init__(self, path):
        self.path, self.off, self.count = path, 0, 0

    def new(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.off)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self.off += end
        parts = data[:end].split(b"\n")[:-1]
        self.count += len(parts)
        return [p.decode("utf-8", "replace") for p in parts]


class Sink:
    """The qwp-sink process of a trial. Every start after the first listens on
    the port of the first and appends to the same file."""

    def __init__(self, exe, d, rows, max_batch):
        self.exe, self.dir, self.rows, self.max_batch = exe, d, rows, max_batch
        self.port, self.proc, self.n = 0, None, 0

    def start(self, faults):
        """Starts a sink with these fault lines; retries for a while when the
        port is still taken (the previous sink was just killed)."""
        for _ in range(100):
            self.n += 1
            err = os.path.join(self.dir, "sink-%d.err" % self.n)
            if self._start(faults, err):
                return
            time.sleep(0.05)
        raise RuntimeError("qwp-sink cannot listen on port %d: see %s" % (self.port, err))

    def _start(self, faults, err):
        args = [self.exe, "--port", str(self.port), "--append", self.rows, "--key-column", "id"]
        if self.max_batch:
            args += ["--max-batch", str(self.max_batch)]
        for f in faults:
            args += ["--fault", f]
        with open(os.path.join(self.dir, "sink-%d.out" % self.n), "wb") as out, \
                open(err, "wb") as e:
            self.proc = subprocess.Popen(args, stdout=out, stderr=e)
        return self._wait_listening(err)

    def _wait_listening(self, err):
        """True once it listens, False if it could not bind; raises otherwise."""
        end = time.monotonic() + 10
        while time.monotonic() < end:
            with open(err, "rb") as f:
                text = f.read()
            m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", text)
            if m:
                self.port = int(m.group(1))
                return True
            if self.proc.poll() is not None:
                if b"listen: Address already in use" in text:
                    return False
                raise RuntimeError("qwp-sink exited with %d: see %s" % (self.proc.returncode, err))
            time.sleep(0.005)
        raise RuntimeError("qwp-sink did not start: see %s" % err)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
        self.proc = None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        self.proc = None


class Trial:
    def __init__(self, p, exes, d):
        self.p, self.exes, self.dir = p, exes, d
        self.journal = os.path.join(d, "journal")
        self.rows = os.path.join(d, "rows.jsonl")
        self.sf = os.path.join(d, "sf")
        self.sink = Sink(exes["sink"], d, self.rows, p["max_batch"])
        self.rows_seen = Lines(self.rows)
        self.kills, self.events = [], []
        self.stats = {"kills_in_flush": 0, "kills_in_big_flush": 0, "sink_restarts": 0,
                      "producer_failures": 0, "producer_exits": {}, "drain_rcs": []}

    def _spawn(self, prod, drain=False):
        args = [self.exes["producer"], "--journal", self.journal, "--name", prod["name"],
                "--conf", planmod.connect_string(self.p, self.sink.port, self.sf),
                "--max-flushes", "400"]
        if drain:
            args.append("--drain")
        else:
            args += ["--seed", str(prod["seed"]), "--big-pct", str(prod["big_pct"]),
                     "--big-rows", "%d:%d" % prod["big_rows"],
                     "--small-rows", str(prod["small_max"]), "--pause-us", str(prod["pause_us"])]
            if prod["close_on_error"]:
                args.append("--close-on-error")
            if prod["kill"] == "mid-publish":
                args += ["--self-kill", "%d:%d" % prod["self_kill"]]
        err = open(os.path.join(self.dir, prod["name"] + ".err"), "wb")
        with err:
            return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)

    def _kill_moment(self, prod, t0, now, line):
        """A record that arms a kill: the kill's time, or None."""
        kind = prod["kill"]
        if kind == "first-flush":
            done = line.startswith(prod["name"] + " flush [") and " returned 0 " in line
            return now + prod["after_first"] if done else None
        if kind not in ("in-flush", "in-big-flush") or now < t0 + prod["arm_after"]:
            return None
        if not line.startswith(prod["name"] + " begin flush"):
            return None
        if kind == "in-big-flush" and " big 1 " not in line + " ":
            return None
        return now + prod["after_begin"]

    def _restart_sink(self, prod):
        self.sink.kill()
        self.stats["sink_restarts"] += 1
        self.events.append("sink killed during %s" % prod["name"])
        return time.monotonic() + prod["sink_down"]

    def _run_producer(self, prod):
        jl = Lines(self.journal)
        jl.new()
        proc = self._spawn(prod)
        t0 = time.monotonic()
        kill_at = {"delay": t0 + prod["kill_after"], "at-open": t0 + prod["open_kill"],
                   "mid-publish": t0 + 2 * prod["kill_after"]}.get(prod["kill"])
        restart_at = t0 + prod["sink_restart"] if prod["sink_restart"] is not None else None
        up_at = None
        while proc.poll() is None:
            now = time.monotonic()
            for line in jl.new():
                if kill_at is None:
                    kill_at = self._kill_moment(prod, t0, now, line)
            if restart_at is not None and now >= restart_at:
                up_at, restart_at = self._restart_sink(prod), None
            if up_at is not None and now >= up_at:
                self.sink.start(prod["faults_after_restart"])
                up_at = None
            if (kill_at is not None and now >= kill_at) or now >= t0 + PRODUCER_DEADLINE:
                proc.kill()
                break
            time.sleep(POLL)
        rc = proc.wait()
        if up_at is not None:
            self.sink.start(prod["faults_after_restart"])
        self._after_death(prod, rc, jl)

    def _after_death(self, prod, rc, jl):
        if rc != -signal.SIGKILL:
            key = str(rc)
            self.stats["producer_exits"][key] = self.stats["producer_exits"].get(key, 0) + 1
            self.stats["producer_failures"] += rc != EXIT_FLUSH_ERROR
            self.events.append("%s exited with %d: %s" % (prod["name"], rc, self._err_tail(prod)))
        jl.new()
        last = [l for l in self._journal_text().split("\n") if l.startswith(prod["name"] + " ")]
        if last and " begin flush " in last[-1]:
            self.stats["kills_in_flush"] += 1
            self.stats["kills_in_big_flush"] += " big 1 " in last[-1] + " "
        self.rows_seen.new()
        self._inspect(prod["name"])
        k = {"producer": prod["name"], "kind": prod["kill"],
             "watermark": slotfiles.read_watermark(os.path.join(self.sf, "camp")),
             "lines": self.rows_seen.count}
        self.kills.append(k)
        self.events.append("%s dead (%s, last record: %s); .ack-watermark %s; sink file %d rows"
                           % (prod["name"], prod["kill"], last[-1].strip() if last else "none",
                              k["watermark"], k["lines"]))

    def _inspect(self, name):
        """With --inspect: what `qsf slot inspect` says of the slot the dead
        producer left (read-only), for investigating a failure."""
        if not self.exes.get("qsf"):
            return
        with open(os.path.join(self.dir, "inspect-after-%s.txt" % name), "wb") as out:
            subprocess.run([self.exes["qsf"], "slot", "inspect", os.path.join(self.sf, "camp")],
                           stdout=out, stderr=subprocess.STDOUT)

    def _err_tail(self, prod):
        with open(os.path.join(self.dir, prod["name"] + ".err"), errors="replace") as f:
            return " | ".join(f.read().strip().split("\n")[-2:])

    def _journal_text(self):
        try:
            with open(self.journal, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""  # every producer so far was killed before it opened the journal

    def _drain(self):
        self.sink.kill()
        self.sink.start([])
        for attempt in range(2):
            proc = self._spawn({"name": "d%d" % (attempt + 1)}, drain=True)
            try:
                rc = proc.wait(timeout=DRAIN_DEADLINE)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            self.stats["drain_rcs"].append(rc)
            if rc != 0:
                self.events.append("drain d%d exited with %d: %s" % (
                    attempt + 1, rc, self._err_tail({"name": "d%d" % (attempt + 1)})))
            if rc == 0:
                break
        self.sink.stop()

    def run(self):
        t0 = time.monotonic()
        try:
            self.sink.start(self.p["faults"])
            for prod in self.p["producers"]:
                self._run_producer(prod)
            self._drain()
        finally:
            self.sink.kill()
        j = journal.parse(self._journal_text())
        ids, corrupt = oracle.read_rows(self.rows) if os.path.exists(self.rows) else ([], 0)
        verdict, details = oracle.judge(j, ids, corrupt, self.kills, self.p["trial"])
        verdict.update({k: v for k, v in self.stats.items()})
        verdict["kills"] = len(self.kills)
        verdict["drain_retries"] = max(0, len(self.stats["drain_rcs"]) - 1)
        verdict["seconds"] = round(time.monotonic() - t0, 2)
        return verdict, details + self.events
