#!/usr/bin/env python3
"""test_summary.py RECORD: scripts/test's last lines, and its exit status.

RECORD holds one line per step scripts/test took, fields separated by tabs:
  build   DIR  WHAT  RC            a build (RC 0: built)
  ctest   DIR  RC    JUNIT         a ctest pass over DIR, its --output-junit file
  skip    DIR  WHY                 a pass left out
  start   DIR                      a ctest pass began (one without its ctest
                                   line was interrupted)
  interrupted                      scripts/test was interrupted (Ctrl-C)
Prints one block per build directory, in the order they first appear:
  build-asan (ASan/UBSan, Debug): 212 passed, 3 skipped, 2 FAILED (14 min)
      FAILED integration/sync
      FAILED unit/test_store (not run: Unable to find executable)
  build-deb (Release, dpkg-buildflags): built (no tests run on it)
  build-tsan: not run (OW_TEST_TSAN=1 adds it)
and a last line with the verdict: PASSED / FAILED / INTERRUPTED.  Exit status: 0 when every build built and
every test of every pass passed, 130 when interrupted, 1 otherwise.

The test results are ctest's own (its JUnit file: a testcase with <failure>
failed; one not run for another reason than SKIP_RETURN_CODE or
SKIP_REGULAR_EXPRESSION, such as a missing executable, failed too, as ctest
counts it), so nothing here depends on the wording of ctest's output.
"""
import sys
import xml.etree.ElementTree as ET

MAX_NAMES = 30  # failed tests named per pass; the rest are counted


def junit_results(path):
    """(passed, skipped, failed [(name, why)], seconds) of ctest's JUnit file"""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    passed = skipped = 0
    failed = []
    for case in suite.iter("testcase") if suite is not None else []:
        name = case.get("name", "?")
        status = case.get("status", "")
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append((name, ""))
        elif status == "disabled":
            skipped += 1
        elif skip is not None or status == "notrun":
            why = skip.get("message", "") if skip is not None else ""
            if why.startswith("SKIP_"):
                skipped += 1
            else:  # ctest counts a test it could not run as failed
                failed.append((name, f"not run: {why}" if why else "not run"))
        else:
            passed += 1
    seconds = float(suite.get("time", "0") or 0) if suite is not None else 0.0
    return passed, skipped, failed, seconds


def duration(seconds):
    if seconds >= 90:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def ctest_block(head, d, rc, junit):
    """(lines, verdict or None) of one ctest pass over build directory d"""
    try:
        passed, skipped, failed, seconds = junit_results(junit)
    except (OSError, ET.ParseError) as e:
        why = getattr(e, "strerror", None) or str(e)
        return [f"{head}: NO TEST RESULTS (ctest exited {rc}; {junit}: {why})"], f"no test results from {d}"
    if passed + skipped + len(failed) == 0:
        lines = [f"{head}: no test matched"]
    else:
        parts = [f"{passed} passed"]
        if skipped:
            parts.append(f"{skipped} skipped")
        if failed:
            parts.append(f"{len(failed)} FAILED")
        lines = [f"{head}: " + ", ".join(parts) + f" ({duration(seconds)})"]
    for name, why in failed[:MAX_NAMES]:
        lines.append(f"    FAILED {name}" + (f" ({why})" if why else ""))
    if len(failed) > MAX_NAMES:
        lines.append(f"    ... and {len(failed) - MAX_NAMES} more "
                     f"({d}/Testing/Temporary/LastTestsFailed.log)")
    if failed:
        return lines, f"{len(failed)} failed in {d}"
    if rc != "0":  # ctest failed without a failed test: say so
        lines.append(f"    ctest exited {rc}")
        return lines, f"ctest exited {rc} in {d}"
    return lines, None


def dir_block(d, recs):
    """(lines, verdict or None) of one build directory's records"""
    what = next((r[2] for r in recs if r[0] == "build"), "")
    head = f"{d} ({what})" if what else d
    lines, verdict = [], None
    for rec in recs:
        if rec[0] == "skip":
            lines.append(f"{head}: not run ({rec[2]})")
        elif rec[0] == "build" and rec[3] != "0":
            lines.append(f"{head}: BUILD FAILED (exit {rec[3]}; its messages are above), no test run on it")
            verdict = f"{d} did not build"
        elif rec[0] == "ctest":
            block, failed = ctest_block(head, d, rec[2], rec[3])
            lines += block
            verdict = verdict or failed
    started = any(r[0] == "start" for r in recs)
    if started and not any(r[0] == "ctest" for r in recs):
        lines.append(f"{head}: its tests were interrupted")
        verdict = f"the tests of {d} were interrupted"
    if not lines:
        lines.append(f"{head}: built (no tests run on it)")
    return lines, verdict


def summarize(records):
    """(lines, exit status)"""
    # build directories in the order their tests ran, then the others
    dirs = []
    for kinds in (("ctest",), ("skip", "build")):
        dirs += [r[1] for r in records if r[0] in kinds and r[1] not in dirs]
    dirs = list(dict.fromkeys(dirs))
    lines, verdicts = [], []
    for d in dirs:
        block, verdict = dir_block(d, [r for r in records if r[0] != "interrupted" and r[1] == d])
        lines += block
        if verdict:
            verdicts.append(verdict)
    if any(r[0] == "interrupted" for r in records):
        lines.append("INTERRUPTED: the passes above are all that ran; scripts/test exits 130")
        return lines, 130
    if verdicts:
        lines.append("FAILED: " + "; ".join(verdicts) + " — scripts/test exits 1")
        return lines, 1
    lines.append("PASSED: every build built and every test of every pass passed — scripts/test exits 0")
    return lines, 0


def main():
    if len(sys.argv) != 2:
        print("usage: test_summary.py RECORD", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        records = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    lines, status = summarize(records)
    print("\n".join(["", "==> summary of every pass (scripts/test)"] + lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
