#!/usr/bin/env python3
"""Compare `offwheel --json resolve` output with the sample index's MANIFEST.json.

usage: resolve_check.py MANIFEST CHANNEL RESOLVE.json [--no-deps]

For every target of the resolve output: the manifest's latest set (or no
complete set), the newer torches passed over and what they lacked, the
newest torch and what it lacks when nothing is complete, and the dependency
closure (project -> version).  Prints one line per problem; exit 1 if any.

Known difference, reported but not counted: for free-threaded targets on
macOS the manifest lists no torch at all, while pip's tag rules (packaging
26: cp313-none-macosx_* fits a 3.13t interpreter) admit the cp313-none
macOS torch; the target is incomplete either way."""
import json
import sys


def main():
    manifest, channel, out = sys.argv[1:4]
    no_deps = "--no-deps" in sys.argv
    m = json.load(open(manifest))
    got = json.load(open(out))
    want = {(t["variant"], t["python"], t["platform"]): t
            for t in m["targets"] if t["channel"] == channel}
    problems = 0
    for t in got["targets"]:
        key = (t["variant"], t["python"], t["platform"])
        w = want.get(key)
        if w is None:
            print("not in the manifest:", t["target"])
            continue
        problems += check(t, w, no_deps)
    print(f"{len(got['targets'])} targets checked, {problems} problems")
    return 1 if problems else 0


def bad(t, msg):
    print(f"{t['target']}: {msg}")
    return 1


def check(t, w, no_deps):
    n = 0
    latest = w["latest"]
    versions = t["versions"]
    if latest is None:
        if t["complete"]:
            n += bad(t, f"complete {versions}, manifest has no complete set")
        newest = w["sets"][0] if w["sets"] else None
        if newest is None:
            if versions["torch"] is not None:
                fth = t["python"].endswith("t") and t["platform"].startswith("macosx")
                print(f"{t['target']}: torch {versions['torch']} where the manifest has none"
                      + (" (known: pip's tags admit cpXY-none for XYt)" if fth else ""))
                n += 0 if fth else 1
        elif versions["torch"] != newest["torch"] or t["missing"] != newest["missing"]:
            n += bad(t, f"newest torch {versions['torch']} missing {t['missing']}, "
                        f"manifest {newest['torch']} missing {newest['missing']}")
        return n
    if not t["complete"]:
        return bad(t, f"incomplete ({t['missing']}, {t['error']}), manifest latest {latest}")
    if {k: versions[k] for k in latest} != latest:
        n += bad(t, f"set {versions}, manifest {latest}")
    newer = []
    for s in w["sets"]:
        if s["torch"] == latest["torch"]:
            break
        newer.append({"torch": s["torch"], "missing": s["missing"]})
    # "why" says what a whole stack ruled out; none is given here
    skipped = [{k: v for k, v in s.items() if k != "why"} for s in t["skipped"]
               if s.get("why") is None]
    if skipped != newer or len(skipped) != len(t["skipped"]):
        n += bad(t, f"passed over {t['skipped']}, manifest {newer}")
    closure = {x["project"]: x["version"] for x in t["members"]}
    expect = latest if no_deps else w["closure"]
    if closure != expect:
        extra = {k: v for k, v in closure.items() if expect.get(k) != v}
        lack = {k: v for k, v in expect.items() if closure.get(k) != v}
        n += bad(t, f"closure differs: got {extra}, manifest {lack}")
    return n


if __name__ == "__main__":
    sys.exit(main())
