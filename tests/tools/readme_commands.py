#!/usr/bin/env python3
"""Every `offwheel ...` command line of the fenced code blocks of Markdown
files, rewritten to run against the sample index, one record a line:

    MODE <TAB> FILE:LINE <TAB> COMMAND AS WRITTEN <TAB> COMMAND TO RUN

usage: readme_commands.py --sample URL --tmp DIR FILE.md...

A command is a line of a ``` block that starts with `offwheel ` or
`scripts/offwheel ` (after an optional `$ ` prompt, or after `#   ` when
a comment shows an alternative), its `\\` continuation lines joined and a
trailing `# ...` comment cut.  A line whose first word after `offwheel` ends
in ':' is a message the page shows (`offwheel resolve: ... is not an
index`), and a line with `[--home DIR]`-style brackets is a synopsis: neither
is a command.

The rewriting (the only changes to what the page says):
  - scripts/offwheel -> offwheel (the binary under test is on PATH);
  - https://download.pytorch.org/whl and https://pypi.org/simple -> the
    sample index served by nginx (URL/whl), which plays both;
  - /media/usb -> DIR/media/usb (the stick), /srv/wheels -> DIR/srv/wheels,
    /etc/nginx -> DIR/etc/nginx.
MODE is `run` when every URL left is the sample's (the command runs for
real and must succeed), `parse` when it names a host the test has not
(a lab's mirror, an object store): it still runs, with every other host
unreachable, and must not be a usage error (exit 2).
"""
import argparse
import re
import sys

START = re.compile(r"^(?:\$ |#\s{3,})?((?:scripts/)?offwheel\s.*)$")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"]+")


def commands(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    fenced, cur, at = False, None, 0
    for n, raw in enumerate(lines, 1):
        if raw.lstrip().startswith("```"):
            fenced, cur = not fenced, None
            continue
        if not fenced:
            continue
        line = raw.strip()
        if cur is not None:  # a continuation line (maybe in a comment)
            line = re.sub(r"^#\s+", "", line) if raw.lstrip().startswith("#") else line
        else:
            m = START.match(line)
            if not m:
                continue
            line, at = m.group(1), n
        line = re.sub(r"\s+#\s.*$", "", line)
        if line.endswith("\\"):
            cur = (cur or "") + line[:-1].rstrip() + " "
            continue
        cmd = ((cur or "") + line).strip()
        cur = None
        words = cmd.split()
        if len(words) > 1 and words[1].endswith(":"):
            continue  # a message the page quotes
        if re.search(r"\[[-A-Z]", cmd):
            continue  # a synopsis
        yield at, cmd


def rewrite(cmd, sample, tmp):
    cmd = re.sub(r"^scripts/offwheel\b", "offwheel", cmd)
    cmd = cmd.replace("https://download.pytorch.org/whl", sample + "/whl")
    cmd = cmd.replace("https://pypi.org/simple", sample + "/whl")
    for path in ("/media/usb", "/srv/wheels", "/etc/nginx"):
        cmd = re.sub(r"(?<![\w/.])" + re.escape(path), tmp + path, cmd)
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for path in a.files:
        for n, cmd in commands(path):
            run = rewrite(cmd, a.sample, a.tmp)
            foreign = [u for u in URL.findall(run) if not u.startswith(a.sample)]
            mode = "parse" if foreign else "run"
            print(f"{mode}\t{path}:{n}\t{cmd}\t{run}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
