"""What a configured build directory builds by default (argv: source root,
build directory, meson): the shared library, the executables qsf, qwp-sink
and qsf-test-sink, and static libraries defined under lib/ or tools/; no test
and no benchmark. Prints every target it builds, then what is wrong."""
import json
import os
import subprocess
import sys

src, build, meson = sys.argv[1:4]


def introspect(what):
    return json.loads(subprocess.check_output([meson, "introspect", "--" + what, build]))


built = [(os.path.relpath(os.path.dirname(t["defined_in"]), src), t["name"], t["type"])
         for t in introspect("targets") if t["build_by_default"]]
for d, n, ty in built:
    print(f"built: {d}/{n} ({ty})")
want = {("executable", "qsf"), ("executable", "qwp-sink"), ("executable", "qsf-test-sink"),
        ("shared library", "qsf")}
bad = [f"not for a plain build: {d}/{n} ({ty})" for d, n, ty in built
       if (ty, n) not in want and (ty != "static library" or d.split("/")[0] not in ("lib", "tools"))]
bad += [f"missing from a plain build: {n} ({ty})" for ty, n in sorted(want)
        if not any((t, m) == (ty, n) for _, m, t in built)]
bad += [f"test configured: {t['name']}" for t in introspect("tests")]
bad += [f"benchmark configured: {b['name']}" for b in introspect("benchmarks")]
print(*bad, sep="\n")
sys.exit(1 if bad else 0)
