#!/usr/bin/env python3
"""Writes the first ```c block under a README heading to a file, so that the
build compiles it and a test runs it: the README's example stays correct.

usage: readme_snippet.py README HEADING OUT
"""
import sys


def snippet(lines, heading):
    under = False
    code = None
    for line in lines:
        if code is None and line.startswith("#"):
            under = line.lstrip("#").strip() == heading
            continue
        if under and code is None and line.strip() == "```c":
            code = []
        elif code is not None and line.strip() == "```":
            return code
        elif code is not None:
            code.append(line)
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    readme, heading, out = sys.argv[1:]
    with open(readme, encoding="utf-8") as f:
        code = snippet(f.read().splitlines(), heading)
    if not code:
        sys.exit(f"{readme}: no ```c block under the heading '{heading}'")
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"/* Extracted from {heading!r} in the README; edit it there. */\n")
        f.write("\n".join(code) + "\n")


main()
