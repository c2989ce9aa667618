#!/usr/bin/env python3
"""Compare offwheel's reading of pip requirement files with pip's own.

usage: reqfile_oracle.py OWREQFILE [-c] FILE...

pip's parser (pip._internal.req.req_file.parse_requirements, the code
`pip install -r` runs) reads the files; the requirements it yields are
compared with owreqfile's JSON lines one by one, in order: the name and
extras (normalized), the specifier set, constraint or requirement, the
--hash values, the file and line, and the marker, evaluated by pip's
packaging against the very marker values offwheel used for four targets.
Exit 0 when they agree, 1 naming each difference, 2 when pip is missing.
"""
import json
import os
import re
import subprocess
import sys

try:
    from pip._internal.network.session import PipSession
    from pip._internal.req.req_file import parse_requirements
    from pip._vendor.packaging.markers import Marker
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.specifiers import SpecifierSet
    from pip._vendor.packaging.utils import canonicalize_name
except ImportError as e:  # pragma: no cover
    print("pip is not importable: %s" % e)
    sys.exit(2)


def pip_lines(args):
    session, out, constraint = PipSession(), [], False
    for a in args:
        if a == "-c":
            constraint = True
            continue
        for pr in parse_requirements(a, session, constraint=constraint):
            Requirement(pr.requirement)  # what pip does next: refuses what does not parse
            m = re.match(r"^-[rc] (.*) \(line (\d+)\)$", pr.comes_from)
            out.append((pr, m.group(1) + ":" + m.group(2) if m else pr.comes_from))
    return out


def compare(pr, where, ow, bad):
    req = Requirement(pr.requirement)
    tag = "%s (pip: %s)" % (ow["where"], where)
    if os.path.normpath(ow["where"].rsplit(":", 1)[0]) != os.path.normpath(where.rsplit(":", 1)[0]) \
            or ow["where"].rsplit(":", 1)[1] != where.rsplit(":", 1)[1]:
        bad.append("%s: read at another place" % tag)
    if canonicalize_name(req.name) != ow["name"]:
        bad.append("%s: name %s, pip %s" % (tag, ow["name"], req.name))
    if sorted(canonicalize_name(e) for e in req.extras) != ow["extras"]:
        bad.append("%s: extras %s, pip %s" % (tag, ow["extras"], sorted(req.extras)))
    if SpecifierSet(ow["specifier"]) != req.specifier:
        bad.append("%s: specifier %s, pip %s" % (tag, ow["specifier"], req.specifier))
    if bool(pr.constraint) != ow["constraint"]:
        bad.append("%s: constraint %s, pip %s" % (tag, ow["constraint"], pr.constraint))
    hashes = sorted("%s:%s" % (alg, h.lower()) for alg, hs in (pr.options or {}).get("hashes", {}).items() for h in hs)
    if hashes != sorted(ow["hashes"]):
        bad.append("%s: hashes %s, pip %s" % (tag, ow["hashes"], hashes))
    for t in ow["applies"]:
        env = dict(t["env"], extra="")
        want = "1" if req.marker is None or req.marker.evaluate(env) else "0"
        if t["result"] != want:
            bad.append("%s: marker %s for %s: offwheel %s, pip %s" % (tag, req.marker, env["sys_platform"], t["result"], want))


def main():
    ow, args = sys.argv[1], sys.argv[2:]
    run = subprocess.run([ow] + args, capture_output=True, text=True)
    try:
        theirs = pip_lines(args)
        pip_err = None
    except Exception as e:  # pip refuses the file
        theirs, pip_err = [], "%s: %s" % (type(e).__name__, e)
    if run.returncode != 0 or pip_err:
        same = (run.returncode != 0) == (pip_err is not None)
        print("offwheel: %s" % (run.stderr.strip() or "read it"))
        print("pip:      %s" % (pip_err or "read it"))
        sys.exit(0 if same else 1)
    mine = [json.loads(l) for l in run.stdout.splitlines()]
    mine = [m for m in mine if not m.get("options")]
    bad = []
    if len(mine) != len(theirs):
        bad.append("offwheel read %d requirements, pip %d" % (len(mine), len(theirs)))
    for (pr, where), m in zip(theirs, mine):
        compare(pr, where, m, bad)
    for b in bad:
        print(b)
    print("%d requirement lines compared with pip's parser, %d differences" % (len(theirs), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
