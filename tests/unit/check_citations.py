#!/usr/bin/env python3
"""Citations of the project's documents resolve (docs/*.md).

Sources and documents cite rules by section: `docs/PROTOCOL.md §6.3`,
`docs/FORMAT.md §6.9-§6.12`, or by heading: `docs/FORMAT.md, "Salvage"`. Every
such citation must name a document of docs/ and a heading of it: a heading
`## 6. Recovery` or `### 6.3 Scan` carries the section id (6, 6.3), a heading's
text (without its id) is what a quoted citation names. Inside docs/ the
`docs/` prefix may be left out, and a bare `§6.3` names the document's own
section. Outside docs/ a bare `§` must name its document; the documents that
are not part of a checkout (sf-format.md, sf-behaviour.md, qwp-ingress.md,
connect-string.md, lessons.md) must not be cited at all. `RFC NNNN §x` is
someone else's section and is not checked. This file names those documents
to forbid them, and is not checked itself.

Prints TAP; exit 1 on a citation that does not resolve."""

import os
import re
import sys

ROOTS = ["lib", "include", "tools", "tests", "fuzz", "bench", "scripts", "examples", "docs", ".ci"]
TOP_FILES = ["README.md", "meson.build", "meson_options.txt"]
SKIP_DIRS = {os.path.join("fuzz", "corpus")}

# Outside documents: the references a checkout does not have.
FORBIDDEN = re.compile(r"\b(?:sf-format|sf-behaviour|qwp-ingress)(?:\.md)?\b|"
                       r"\b(?:connect-string|lessons)\.md\b")

# Blanks, including a line break into a comment's continuation (" * ", "# ", "// ").
SP = r"(?:[ \t]|\n[ \t]*(?:\*(?!/)|//+|#+)?)"
SECT = r"§\d+(?:\.\d+)*"
# A list of sections: §6.2, §6.3-§6.5, §1 and §15.1, §8.2-8.3
SECT_LIST = (r"(?P<list>" + SECT + r"(?:" + SP + r"*(?:,|and|or|/)?" + SP + r"*" + SECT +
             r"|[-–]" + SP + r"*§?\d+(?:\.\d+)*)*)")
DOC = r"(?P<docs>docs/)?(?P<doc>[A-Z][A-Z0-9_-]*)\.md"
CITE = re.compile(DOC + r"(?:" + SP + r"+" + SECT_LIST + r"|," + SP + r'*"(?P<head>[^"\n]+)")')
RFC = re.compile(r"RFC" + SP + r"+\d+" + SP + r"+" + SECT_LIST)
BARE = re.compile(SECT_LIST)
DOC_PATH = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.md)\b")
HEADING = re.compile(r"^#{1,6}[ \t]+(?:(\d+(?:\.\d+)*)\.?[ \t]+)?(.*?)[ \t]*#*[ \t]*$")


def headings(path):
    """Section ids and heading texts of a Markdown file (code fences skipped)."""
    ids, texts, fence = set(), set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = None if fence else HEADING.match(line.rstrip("\n"))
            if m:
                if m.group(1):
                    ids.add(m.group(1))
                texts.add(m.group(2).strip())
    return ids, texts


def sections(text):
    """The section ids of a list such as '§6.2, §6.3-§6.5'."""
    return re.findall(r"§?(\d+(?:\.\d+)*)", text)


def source_files(root):
    out = [os.path.join(root, n) for n in TOP_FILES if os.path.isfile(os.path.join(root, n))]
    for r in ROOTS:
        for d, dirs, names in os.walk(os.path.join(root, r)):
            rel = os.path.relpath(d, root)
            dirs[:] = [x for x in dirs if os.path.join(rel, x) not in SKIP_DIRS]
            out += [os.path.join(d, n) for n in names]
    return sorted(out)


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


class Checker:
    def __init__(self, root):
        self.root = root
        self.docs = {}
        ddir = os.path.join(root, "docs")
        for n in sorted(os.listdir(ddir)):
            if n.endswith(".md"):
                self.docs[n] = headings(os.path.join(ddir, n))
        self.bad = []
        self.cited = 0

    def fail(self, rel, text, pos, what):
        self.bad.append("%s:%d: %s" % (rel, text.count("\n", 0, pos) + 1, what))

    def check_ids(self, rel, text, pos, doc, ids):
        self.cited += 1
        known = self.docs[doc][0]
        for sid in ids:
            if sid not in known:
                self.fail(rel, text, pos, "%s has no section %s" % (doc, sid))

    def check_file(self, path):
        text = read_text(path)
        if text is None or ("§" not in text and ".md" not in text and "sf-" not in text):
            return
        rel = os.path.relpath(path, self.root)
        in_docs = rel.startswith("docs" + os.sep)
        own = os.path.basename(rel) if in_docs else None
        for m in FORBIDDEN.finditer(text):
            self.fail(rel, text, m.start(), "cites %s, which is not part of the project" %
                      m.group(0))
        for m in DOC_PATH.finditer(text):
            if m.group(1) not in self.docs:
                self.fail(rel, text, m.start(), "names docs/%s, which does not exist" % m.group(1))
        covered = []
        for m in CITE.finditer(text):
            doc = m.group("doc") + ".md"
            if not m.group("docs") and not in_docs:
                continue  # a bare NAME.md outside docs/ is not ours to judge (README.md ...)
            if doc not in self.docs:
                if m.group("docs") or m.group("list"):
                    self.fail(rel, text, m.start(), "cites %s, which is not in docs/" % doc)
                continue
            if m.group("list"):
                covered.append(m.span("list"))
                self.check_ids(rel, text, m.start(), doc, sections(m.group("list")))
            elif m.group("head").strip() not in self.docs[doc][1]:
                self.cited += 1
                self.fail(rel, text, m.start(), '%s has no heading "%s"' % (doc, m.group("head")))
            else:
                self.cited += 1
        for m in RFC.finditer(text):
            covered.append(m.span("list"))
        for m in BARE.finditer(text):
            if any(a <= m.start() < b for a, b in covered):
                continue
            if own:
                self.check_ids(rel, text, m.start(), own, sections(m.group("list")))
            else:
                self.fail(rel, text, m.start(), "%s names no document" % m.group("list"))

    def run(self):
        me = os.path.realpath(__file__)
        files = [p for p in source_files(self.root) if os.path.realpath(p) != me]
        for p in files:
            self.check_file(p)
        print("1..%d" % (len(self.bad) + 1))
        print("ok 1 - %d files checked, %d citations of %d documents" %
              (len(files), self.cited, len(self.docs)))
        for i, b in enumerate(self.bad):
            print("not ok %d - %s" % (i + 2, b))
        return 1 if self.bad else 0


if __name__ == "__main__":
    sys.exit(Checker(sys.argv[1] if len(sys.argv) > 1 else ".").run())
