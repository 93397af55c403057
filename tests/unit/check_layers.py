#!/usr/bin/env python3
"""The layering of lib/ (docs/ARCHITECTURE.md): which module may include which.

  ground    bytes.h err.h log.h crc32c.h qsf_assert.h text.h seglimits.h grow.h   (nothing but qsf.h)
  os        lib/os/                            the syscall table
  services  latch.h inbox.h                    a sender's shared state
  qwp       lib/qwp/                           the wire format
  conf      lib/conf/                          the connect string
  sf        lib/sf/                            the store-and-forward substrate
  io        lib/io/                            the I/O thread; reaches sf only through sf/ring.h
  sender    lib/sender/                        the public API's glue: may use everything
  chunk     lib/chunk/                         columns in: the chunk API over the sender's glue
  qwpdec    lib/qwpdec/                        the server-side decoder, outside libqsf:
                                               no module of libqsf may include it
  sfops     lib/sfops/                         the qsf CLI's operator tooling, outside
                                               libqsf: no module of libqsf may include it

A module includes only modules listed for it below, so no two modules depend on
each other (no cycle), and none of the headers FORBIDDEN to it: sfops reaches
recovery only through sf/recover_view.h, never its internal header. Prints TAP; exit 1 on a forbidden include."""

import os
import re
import sys

ALLOWED = {
    "ground": {"public", "ground"},
    "os": {"public", "ground", "os"},
    "services": {"public", "ground", "os", "services"},
    "qwp": {"public", "ground", "os", "qwp"},
    "conf": {"public", "ground", "conf"},
    "sf": {"public", "ground", "os", "services", "qwp", "sf"},
    "io": {"public", "ground", "os", "services", "qwp", "io", "sf/ring.h"},
    "sender": {"public", "ground", "os", "services", "qwp", "conf", "sf", "io", "sender"},
    "chunk": {"public", "ground", "os", "services", "qwp", "conf", "sf", "io", "sender",
              "chunk"},
    "qwpdec": {"public", "ground", "qwp", "qwpdec"},
    "sfops": {"public", "ground", "os", "services", "qwp", "sf", "sfops"},
}
FORBIDDEN = {"sfops": {"sf/recover_int.h"}}
GROUND = {"bytes.h", "err.h", "log.h", "crc32c.h", "crc32c.c", "err.c", "log.c", "qsf_assert.h",
          "qsf_assert.c", "text.h", "text.c", "seglimits.h", "grow.h"}


def module_of(rel):
    """Module of a file (path relative to lib/), or of an include target."""
    if "/" in rel:
        return rel.split("/")[0]
    if rel == "qsf.h":
        return "public"
    return "ground" if rel in GROUND else "services"


def main():
    root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "lib")
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h", ".def"))]
    files.sort()
    bad = []
    for path in files:
        rel = os.path.relpath(path, root)
        mod = module_of(rel)
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                target = module_of(inc)
                allowed = target == mod or target in ALLOWED[mod] or inc in ALLOWED[mod]
                if allowed and inc not in FORBIDDEN.get(mod, ()):
                    continue
                bad.append("%s (%s) includes %s (%s)" % (rel, mod, inc, target))
    print("1..%d" % (len(bad) + 1))
    print("ok 1 - %d files of lib/ checked" % len(files))
    for i, b in enumerate(bad):
        print("not ok %d - %s" % (i + 2, b))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
