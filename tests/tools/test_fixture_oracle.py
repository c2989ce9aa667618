#!/usr/bin/env python3
"""The sample index's generator is a test oracle (it writes the sets the
resolver must pick), so its own small PEP 440 / PEP 508 evaluator is checked
here against PyPA's packaging, the reference implementation pip vendors.

usage: test_fixture_oracle.py      exit 0 when every case agrees, 1 naming
                                   the ones that do not, 77 without packaging

Cases: every version, specifier and marker the generator itself writes into
the sample index (taken from its plan), and hand-picked edge cases of the
forms it claims to support (releases, aN/bN/rcN, .devN, +local, ==X.*).
"""
import importlib.machinery
import importlib.util
import itertools
import os
import sys

try:
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
except ImportError:
    print("packaging is not installed (apt-get install python3-packaging)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("mfi", os.path.join(HERE, "make-fixture-index"))
spec = importlib.util.spec_from_loader("mfi", loader)
mfi = importlib.util.module_from_spec(spec)
loader.exec_module(mfi)

VERSIONS = ["2.10.0", "2.10.0.dev20251021", "2.10.0.dev20251022+cu128", "2.9.1", "2.9.1+cpu",
            "2.10.0a0", "2.10.0b1", "2.10.0rc1", "2.10", "2.10.1", "3.0", "0.25.0",
            "0.25.0.dev20251021+cu126", "1.14.0", "80.9.0", "3.19.1", "2025.9.0", "12.8.93"]
SPECS = ["==2.10.0", ">=2.9", "<3", ">=2.9,<2.11", "!=2.10.0", "==2.10.*", "==2.9.1+cpu",
         ">2.10.0.dev20251021", "<=2.10.0rc1", ">=1.13.3", "==0.25.0.dev20251021+cu126", ""]
MARKERS = ['platform_system == "Linux"', 'platform_machine == "x86_64"',
           'python_version < "3.13"', 'python_version >= "3.12"',
           'sys_platform == "linux" and platform_machine == "x86_64"',
           'platform_system == "Windows"', 'python_version >= "3.9" and platform_system == "Linux"']
ENVS = [{"platform_system": s, "platform_machine": m, "sys_platform": p, "python_version": v}
        for (s, p), m, v in itertools.product([("Linux", "linux"), ("Windows", "win32"),
                                               ("Darwin", "darwin")],
                                              ["x86_64", "aarch64", "AMD64", "arm64"],
                                              ["3.10", "3.11", "3.12", "3.13"])]


def from_plan():
    """The versions, specifiers and markers the generator writes itself."""
    versions, specs, markers = set(), set(), set()
    args = mfi.parse_args([os.devnull])
    plan = mfi.build_plan(args, [], mfi.load_fatbins(args.fatbin_dir))[0]
    for w in plan:
        versions.add(w.version)
        for req in getattr(w, "requires", []) or []:
            _, sp, mk = mfi.split_requirement(req)
            if sp:
                specs.add(sp)
            if mk:
                markers.add(mk)
    return versions, specs, markers


def main():
    bad = []
    try:
        pv, ps, pm = from_plan()
    except Exception as e:  # the plan's shape is the generator's business
        print("note: the plan could not be read (%s); hand-picked cases only" % e)
        pv, ps, pm = set(), set(), set()
    versions = sorted(set(VERSIONS) | pv)
    specs = sorted(set(SPECS) | ps)
    markers = sorted(set(MARKERS) | pm)
    # ordering: the generator's sort key against packaging's Version order
    for a, b in itertools.combinations(versions, 2):
        mine = (mfi.version_key(a) > mfi.version_key(b)) - (mfi.version_key(a) < mfi.version_key(b))
        va, vb = Version(a.split("+")[0]), Version(b.split("+")[0])
        ref = (va > vb) - (va < vb)
        if mine != ref:
            bad.append("order %s vs %s: mine %d, packaging %d" % (a, b, mine, ref))
    # specifiers (pre-releases allowed: the sample index pins nightlies)
    for sp, v in itertools.product(specs, versions):
        mine = mfi.spec_allows(sp, v)
        ref = SpecifierSet(sp).contains(v, prereleases=True)
        if mine != ref:
            bad.append("%r contains %s: mine %s, packaging %s" % (sp, v, mine, ref))
    # markers
    for mk, env in itertools.product(markers, ENVS):
        mine = mfi.marker_true(mk, env)
        ref = Marker(mk).evaluate(env)
        if mine != ref:
            bad.append("%r on %s: mine %s, packaging %s" % (mk, env, mine, ref))
    n = len(versions) * (len(versions) - 1) // 2 + len(specs) * len(versions) + len(markers) * len(ENVS)
    print("%d cases (%d versions, %d specifiers, %d markers from the plan and by hand): %d differ"
          % (n, len(versions), len(specs), len(markers), len(bad)))
    for b in bad[:40]:
        print("  " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
