"""qsf_metrics_prometheus and qsf_stats_json read by real parsers: the
Prometheus text is parsed by prometheus_client's parser, the JSON by the json
module, and both must hold the numbers qsf_stats_get gave for a sender in a
known state (metrics_dump.c: paused, no server, a known backlog). TAP output.

    check_metrics.py METRICS_DUMP
"""
import json
import os
import subprocess
import sys
import tempfile

from prometheus_client.parser import text_string_to_metric_families

SENDER_ID = "metrics-test"
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def read(dirname, name):
    with open(os.path.join(dirname, name), encoding="utf-8") as f:
        return f.read()


def struct_values(text):
    return {k: int(v) for k, v in (line.split() for line in text.splitlines())}


def declared_names(text):
    """The names as written in the text, which the parser normalises (it
    reads a counter declared without _total as if it had one)."""
    types = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
        elif line and not line.startswith("#"):
            name = line.split("{", 1)[0].split(" ", 1)[0]
            check(name in types, f"{name}: the sample follows its TYPE line")
    for name, kind in types.items():
        check(kind != "counter" or name.endswith("_total"), f"counter {name} ends in _total")


def prometheus_values(text, sender_id=SENDER_ID):
    """name without qsf_ and _total -> (type, value); every check of form."""
    out = {}
    for fam in text_string_to_metric_families(text):
        check(fam.name.startswith("qsf_"), f"{fam.name} is named qsf_...")
        check(fam.type in ("counter", "gauge"), f"{fam.name} has a TYPE", fam.type)
        check(fam.documentation, f"{fam.name} has a HELP text")
        check(len(fam.samples) == 1, f"{fam.name} has one sample", len(fam.samples))
        for s in fam.samples:
            want = fam.name + ("_total" if fam.type == "counter" else "")
            check(s.name == want, f"{s.name}: a counter ends in _total", want)
            check(s.labels == {"sender_id": sender_id}, f"{s.name} is labelled sender_id",
                  s.labels)
            out[fam.name[len("qsf_"):]] = (fam.type, s.value)
    return out


def report():
    print(f"1..{len(results)}")
    for i, (ok, what, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}")
        if not ok:
            print(f"# got: {detail}")
    return 0 if all(ok for ok, _, _ in results) else 1


def main():
    with tempfile.TemporaryDirectory() as d:
        done = subprocess.run([sys.argv[1], d], check=False)
        check(done.returncode == 0, "metrics_dump wrote the stats", done.returncode)
        if done.returncode == 0:
            check_dump(d)
    return report()


def check_dump(d):
    st = struct_values(read(d, "stats.txt"))
    js = json.loads(read(d, "stats.json"))
    prom_text = read(d, "metrics.prom")
    prom = prometheus_values(prom_text)
    declared_names(prom_text)
    check(js.get("sender_id") == SENDER_ID, "JSON names the sender", js.get("sender_id"))
    numbers = {k: v for k, v in js.items() if k not in ("sender_id", "current_host")}
    check(all(isinstance(v, int) for v in numbers.values()), "JSON numbers are integers")
    check(set(numbers) == set(prom), "JSON and Prometheus have the same fields",
          sorted(set(numbers) ^ set(prom)))
    for k, v in sorted(numbers.items()):
        if k in prom and k != "oldest_unacked_age_ms":
            check(prom[k][1] == v, f"{k}: Prometheus holds the JSON value", (prom[k][1], v))
    for k, v in sorted(st.items()):
        if k in numbers and k != "oldest_unacked_age_ms":
            check(numbers[k] == v, f"{k}: JSON holds the qsf_stats_get value", (numbers[k], v))
    # the known state: a paused sender that never connected, with its backlog
    n = st["flushes"]
    check(js["pending_frames"] == n, "pending_frames is the flushes published", js["pending_frames"])
    check(js["published_fsn"] == n - 1 and js["acked_fsn"] == -1, "the FSN gauges")
    check(js["pending_bytes"] > 0, "pending_bytes counts the backlog")
    check(js["paused"] == 1 and js["connected"] == 0 and js["frames_sent"] == 0, "paused")
    age = (st["oldest_unacked_age_ms"], js["oldest_unacked_age_ms"],
           prom.get("oldest_unacked_age_ms", (None, -2))[1])
    check(0 <= age[0] <= age[1] <= age[2], "the age is set and grows in snapshot order", age)


if __name__ == "__main__":
    sys.exit(main())
