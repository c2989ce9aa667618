#!/usr/bin/env python3
"""Check that a command's output fits a terminal and splits no word.

usage: wrapcheck.py run --cols N --out FILE -- COMMAND [ARGS...]
       wrapcheck.py words REFERENCE NARROW

run: COMMAND runs on a pseudo-terminal N columns wide (stdout and stderr
both on it, as in a shell; tests/tools/ptyscreen.py's terminal model turns
what it wrote into the final screen, saved to FILE).  Every line it wrote,
progress lines that were later erased included, must fit N columns; a line
may run past the edge only when it holds a word (a URL, a path) that could
not fit even on a continuation line of its own.  A progress total line must
end with a whole part (never "~3.16 GB lef").  Prints the screen and each
failure; exits 1 on a failure, else 0 (the command's own status is printed
last as "status N").

words: every word on the REFERENCE screen (the same commands on a wide
terminal) must be on the NARROW one, whole.  Words with digits (times,
rates, sequence numbers, key ids), the word after a number (its unit) and
the progress lines are left out:
they differ between two runs.  Exits 1 and names the missing words.
Standard library only.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptyscreen import run_on_pty, screen  # noqa: E402

CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# a progress total: "  3 of 18 wheels done, ..." or "  5 done, ..."
TOTAL = re.compile(r"^  (\d+ of \d+ .* done|\d+ done)(, |$)")
# how a whole total ends: its count, its bytes and rate, bytes left, an ETA
TOTAL_END = re.compile(r"(done|B/s|B\+? left|ETA ~?\d+ (s|min)|\d+ h \d+ min)$")


def written_lines(raw):
    """Each line as written: escapes removed, split at CR and LF."""
    text = CSI.sub("", raw.decode("utf-8", "replace"))
    return [l for l in re.split(r"\r\n|\r|\n", text)]


def line_problems(raw, cols):
    bad = []
    for line in written_lines(raw):
        if len(line) > cols:
            words = line.split()
            if not any(len(w) + 4 > cols for w in words):
                bad.append(f"wider than {cols} ({len(line)}): {line!r}")
        if TOTAL.match(line) and not TOTAL_END.search(line.rstrip()):
            bad.append(f"progress total cut: {line!r}")
    return bad


def words_of(lines):
    out = set()
    for line in lines:
        if TOTAL.match(line):
            continue
        prev = ""
        for w in line.split():
            # a number's unit too ("1 second", "2 seconds")
            if not re.search(r"\d", w) and not re.search(r"\d", prev):
                out.add(w)
            prev = w
    return out


def main():
    a = sys.argv[1:]
    if a[:1] == ["words"] and len(a) == 3:
        ref = open(a[1], encoding="utf-8").read().splitlines()
        nar = open(a[2], encoding="utf-8").read().splitlines()
        missing = sorted(words_of(ref) - words_of(nar))
        for w in missing:
            print(f"not whole on the narrow screen: {w!r}")
        sys.exit(1 if missing else 0)
    if a[:1] != ["run"] or "--" not in a:
        sys.exit(__doc__)
    opts, cmd = a[1:a.index("--")], a[a.index("--") + 1:]
    cols = int(opts[opts.index("--cols") + 1])
    outf = opts[opts.index("--out") + 1]
    raw, status = run_on_pty(cmd, cols, 120)
    lines = screen(raw, cols)
    with open(outf, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    for line in lines:
        print(line)
    bad = line_problems(raw, cols)
    for b in bad:
        print("WRAPCHECK:", b)
    print("status", status)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
