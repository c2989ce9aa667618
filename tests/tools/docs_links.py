#!/usr/bin/env python3
"""The README stays a newcomer's page and its links lead somewhere.

usage: docs_links.py SOURCE_DIR

README.md has at most 250 lines and starts with the two commands
(scripts/demo, scripts/test) in its first 30 lines; every relative link in
README.md and docs/*.md names a file or folder of the repository, and a
link with an #anchor names a heading of that page.  Exit 1 naming each
difference."""
import os
import re
import sys

MAX_LINES = 250


def anchors(path):
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to '-'."""
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^#+\s+(.*)", line)
        if m:
            h = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(h.replace(" ", "-"))
    return out


def check_links(root, page, bad):
    text = open(page, encoding="utf-8").read()
    n = 0
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        n += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        rel = os.path.relpath(page, root)
        if not os.path.exists(full):
            bad.append("%s: link to %s: no such file" % (rel, target))
        elif frag and full.endswith(".md") and frag not in anchors(full):
            bad.append("%s: link to %s: no heading '%s' there" % (rel, target, frag))
    return n


def main():
    root = sys.argv[1]
    readme = os.path.join(root, "README.md")
    lines = open(readme, encoding="utf-8").read().splitlines()
    bad = []
    if len(lines) > MAX_LINES:
        bad.append("README.md: %d lines, more than %d: move reference parts to docs/" % (len(lines), MAX_LINES))
    head = "\n".join(lines[:30])
    for cmd in ("scripts/demo", "scripts/test"):
        if cmd not in head:
            bad.append("README.md: %s is not in its first 30 lines" % cmd)
    pages = [readme] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    n = sum(check_links(root, p, bad) for p in pages)
    for b in bad:
        print(b)
    print("README.md: %d lines; %d links in %d pages checked, %d problems" % (len(lines), n, len(pages), len(bad)))
    sys.exit(1 if bad or n == 0 else 0)


if __name__ == "__main__":
    main()
