#!/usr/bin/env python3
"""Print the shell commands of one ```sh block of README.md, one per line.

usage: readme_block.py README.md "SECTION HEADING"

The first ```sh block after the heading: continuation lines joined,
comment-only lines dropped, except "#   cmd" lines (an indented command —
cd, offwheel, pip, signify-openbsd, sha256sum — in a comment: the stock-tool
alternative the README shows, and its continuation lines), printed with the
"#" and indentation removed.  Trailing "# ..." comments are cut.
"""
import re
import sys


def main():
    path, heading = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8").read().splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip("# ").strip() == heading)
    except StopIteration:
        sys.exit(f"{path}: no section '{heading}'")
    i = next(i for i in range(start, len(lines)) if lines[i].startswith("```sh"))
    block = []
    for l in lines[i + 1:]:
        if l.startswith("```"):
            break
        block.append(l)
    cmds, cur = [], ""
    for l in block:
        m = re.match(r"^#\s{3,}((?:cd|offwheel|pip|signify-openbsd|sha256sum)\s.*)$", l)
        if m:
            l = m.group(1)
        elif cur and re.match(r"^#\s{3,}\S", l):  # a commented command, continued
            l = l.lstrip("#").strip()
        elif l.lstrip().startswith("#") or not l.strip():
            continue
        l = re.sub(r"\s+#\s.*$", "", l)
        if l.endswith("\\"):
            cur += l[:-1].rstrip() + " "
            continue
        cmds.append((cur + l.strip()).strip())
        cur = ""
    for c in cmds:
        print(c)


if __name__ == "__main__":
    main()
