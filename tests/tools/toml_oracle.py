#!/usr/bin/env python3
"""Compare offwheel's TOML reader (tests/tools/owtoml) with Python's tomllib.

    toml_oracle.py OWTOML FILE...

For each FILE: when tomllib reads it, owtoml must read it too and give the
same tree (strings equal; integers, floats and booleans equal to what their
text says; dates and times only present as non-string values); when tomllib
refuses it, owtoml must refuse it too (exit 1, a message naming FILE:LINE).
Prints one line per file; exit 1 when any disagrees."""
import json
import math
import subprocess
import sys
import tomllib


def scalar_equal(raw, want):
    text = raw.replace("_", "")
    if isinstance(want, bool):
        return raw == ("true" if want else "false")
    if isinstance(want, int):
        try:
            return int(text, 0 if text[:2] in ("0x", "0o", "0b") else 10) == want
        except ValueError:
            return False
    if isinstance(want, float):
        try:
            got = float(text)
        except ValueError:
            return False
        return (math.isnan(got) and math.isnan(want)) or got == want
    return True  # dates and times: present, and not a string


def same(got, want, where):
    if isinstance(want, dict):
        if not isinstance(got, dict) or (set(got) == {"scalar"} and set(want) != {"scalar"}):
            return f"{where}: a table in tomllib, {got!r:.80} in offwheel"
        if set(got) != set(want):
            return f"{where}: keys {sorted(want)} in tomllib, {sorted(got)} in offwheel"
        for k in want:
            bad = same(got[k], want[k], f"{where}.{k}")
            if bad:
                return bad
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{where}: an array of {len(want)} in tomllib, {got!r:.80} in offwheel"
        for i, (g, w) in enumerate(zip(got, want)):
            bad = same(g, w, f"{where}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(want, str):
        return None if got == want else f"{where}: {want!r:.80} in tomllib, {got!r:.80} in offwheel"
    if not (isinstance(got, dict) and set(got) == {"scalar"}):
        return f"{where}: {want!r} ({type(want).__name__}) in tomllib, {got!r:.80} in offwheel"
    return None if scalar_equal(got["scalar"], want) else f"{where}: {want!r} in tomllib, {got['scalar']!r} in offwheel"


def main():
    owtoml, files = sys.argv[1], sys.argv[2:]
    bad = 0
    for f in files:
        try:
            with open(f, "rb") as fh:
                want = tomllib.load(fh)
            why_not = None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            want, why_not = None, str(e)
        r = subprocess.run([owtoml, f], capture_output=True, text=True)
        if want is None:
            ok = r.returncode == 1 and f in r.stderr
            print(f"{'ok ' if ok else 'BAD'} {f}: refused by tomllib ({why_not}); offwheel: "
                  + (r.stderr.strip() or f"read it (exit {r.returncode})"))
        else:
            if r.returncode != 0:
                ok, msg = False, f"offwheel refused it: {r.stderr.strip()}"
            else:
                diff = same(json.loads(r.stdout), want, "")
                ok, msg = diff is None, diff or "the same tree"
            print(f"{'ok ' if ok else 'BAD'} {f}: {msg}")
        bad += not ok
    print(f"{len(files) - bad}/{len(files)} files agree with tomllib")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
