"""examples/metrics as a user runs it: metrics_server on a free loopback
port answers /metrics with text that prometheus_client's parser reads, and
/stats.json with JSON holding the same fields; anything else is a 404; it
stops cleanly on SIGTERM. TAP output.

    check_metrics_example.py METRICS_SERVER
"""
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_metrics import check, declared_names, prometheus_values, report  # noqa: E402

SENDER_ID = "metrics-example"


def fetch(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, "", ""


def check_served(base):
    status, ctype, text = fetch(base, "/metrics")
    check(status == 200, "/metrics answers 200", status)
    check(ctype.startswith("text/plain; version=0.0.4"), "/metrics says its format", ctype)
    prom = prometheus_values(text, SENDER_ID)
    declared_names(text)
    status, ctype, text = fetch(base, "/stats.json")
    check(status == 200 and ctype == "application/json", "/stats.json answers JSON", ctype)
    js = json.loads(text)
    check(js.get("sender_id") == SENDER_ID, "the JSON names the sender", js.get("sender_id"))
    fields = set(js) - {"sender_id", "current_host"}
    check(fields == set(prom), "the same fields in both", sorted(fields ^ set(prom)))
    check(fetch(base, "/nothing")[0] == 404, "another path is a 404")


def main():
    env = dict(os.environ)
    env.pop("QDB_CLIENT_CONF", None)  # the example's own sink and slot
    proc = subprocess.Popen([sys.argv[1], "0", "30"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        check("http://127.0.0.1:" in line, "the example serves on the loopback", line.strip())
        if "http://" in line:
            check_served(line.split()[1].rsplit("/", 1)[0])
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    check(proc.returncode == 0, "it closes its sender cleanly on SIGTERM", proc.returncode)
    left = [l.split()[-1] for l in out.splitlines() if "directory left in /tmp/" in l]
    for d in left:  # the example's own fresh directory
        subprocess.run(["rm", "-rf", "--", d], check=False)
    return report()


if __name__ == "__main__":
    sys.exit(main())
