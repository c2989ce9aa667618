#!/usr/bin/env python3
"""func_shape.py - every C function of src/ is at most 64 lines long and takes
at most 7 parameters (docs/conventions.md).

    func_shape.py SOURCE_DIR [--list]

Reads each src/**/*.c file as our style writes functions: the definition
starts in column 0 and its body opens with a "{" alone on a line and closes
with a "}" alone on a line.  Lines counted are the body's, braces included.
Exit status 1 names every function over a limit; --list prints every
function's lines and parameters, longest first."""
import os
import re
import sys

MAX_LINES = 64
MAX_PARAMS = 7


def params_of(head):
    """The parameter count of a definition head 'type name(a, b, ...)'."""
    start = head.index("(")
    depth, cur, out = 0, "", []
    for ch in head[start:]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
        if ch == "," and depth == 1:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    out = [p.strip() for p in out if p.strip()]
    return 0 if out == ["void"] else len(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and line[0] not in "#/}*{" and "(" in line \
                and not line.rstrip().endswith(";") and not line.startswith("typedef"):
            head, j = line, i
            while j + 1 < len(lines) and lines[j + 1] != "{" and not head.rstrip().endswith((";", "}")) \
                    and j - i < 12:
                j += 1
                head += " " + lines[j].strip()
            if j + 1 < len(lines) and lines[j + 1] == "{" and "=" not in head.split("(")[0]:
                end = j + 1
                while end < len(lines) and lines[end] != "}":
                    end += 1
                m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", head)
                yield m.group(1), i + 1, end - (j + 1) + 1, params_of(head)
                i = end
        i += 1


def main():
    root = sys.argv[1]
    listing = "--list" in sys.argv[2:]
    rows, bad = [], []
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for fn in sorted(files):
            if not fn.endswith(".c"):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)
            for name, line, n, np in functions(path):
                rows.append((n, np, f"{rel}:{line} {name}"))
                if n > MAX_LINES or np > MAX_PARAMS:
                    bad.append(f"{rel}:{line}: {name}: {n} lines, {np} parameters "
                               f"(at most {MAX_LINES} lines and {MAX_PARAMS} parameters)")
    if listing:
        for n, np, where in sorted(rows, reverse=True):
            print(f"{n:4d} lines {np:2d} params  {where}")
    if len(rows) < 500:
        print(f"func_shape: only {len(rows)} functions found under {root}/src: the reader is broken",
              file=sys.stderr)
        return 1
    for b in bad:
        print(b, file=sys.stderr)
    print(f"func_shape: {len(rows)} functions, {len(bad)} over the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
