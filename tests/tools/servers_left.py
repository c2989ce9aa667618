#!/usr/bin/env python3
"""servers_left.py RUN_ID [WATCHDOG_LOG]: the integration tests' last test
(ctest's integration/servers_stopped, a FIXTURES_CLEANUP of every
integration test, so it runs after all of them).

Fails (exit 1) when a process of this build's integration tests is still
running: one whose environment holds OW_TEST_RUN_ID=RUN_ID (ctest gives it
to every integration test, and every process a test starts inherits it), or
whose command line does (nginx, which overwrites its environment with its
process title, gets it as `-g "env OW_TEST_RUN_ID=RUN_ID;"` from
tests/lib/servers.bash), and the children of such a process (nginx's
workers).  Processes of other runs (other build directories, other people's
worktrees) carry another id and are never looked at twice.  What it finds
it names, then stops (TERM, then KILL), so that the next run starts clean.

It waits up to OW_SERVERS_GRACE seconds (default 10) for stragglers first:
servers.bash's watchdogs stop a server whose test never did about a second
after the test's bats process ended.  The lines those watchdogs wrote to
WATCHDOG_LOG are printed (and the log emptied): they name the test files
whose own teardown did not stop what they started.
"""
import os
import signal
import sys
import time


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def processes():
    """pid -> (ppid, state, environ entries, cmdline bytes)"""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = read(f"/proc/{name}/stat")
        cmdline = read(f"/proc/{name}/cmdline")
        if stat is None or cmdline is None:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        env = read(f"/proc/{name}/environ") or b""
        out[int(name)] = (int(fields[1]), fields[0].decode(), env.split(b"\0"), cmdline)
    return out


def leftovers(run_id):
    mark = b"OW_TEST_RUN_ID=" + run_id.encode()
    procs = processes()
    me = os.getpid()
    found = {pid for pid, (_, state, env, cmd) in procs.items()
             if pid != me and state not in ("Z", "X") and (mark in env or mark in cmd)}
    grew = True
    while grew:  # and their children (nginx's workers)
        kids = {pid for pid, (ppid, state, _, _) in procs.items()
                if ppid in found and pid not in found and pid != me and state not in ("Z", "X")}
        grew = bool(kids)
        found |= kids
    return {pid: procs[pid][3].replace(b"\0", b" ").decode(errors="replace").strip() for pid in found}


def stop(pids):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        for _ in range(30):
            if not any(os.path.exists(f"/proc/{p}") and read(f"/proc/{p}/cmdline") for p in pids):
                return
            time.sleep(0.1)


def main():
    if len(sys.argv) < 2 or not sys.argv[1]:
        print("usage: servers_left.py RUN_ID [WATCHDOG_LOG]", file=sys.stderr)
        return 2
    run_id = sys.argv[1]
    log = sys.argv[2] if len(sys.argv) > 2 else None
    deadline = time.monotonic() + float(os.environ.get("OW_SERVERS_GRACE", "10"))
    left = leftovers(run_id)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = leftovers(run_id)
    notes = (read(log) or b"").decode(errors="replace").splitlines() if log else []
    if notes:
        print("stopped by servers.bash's watchdog (the test file's own teardown did not):")
        for line in notes:
            print("  " + line)
        open(log, "w").close()
    if not left:
        print(f"no process of this build's integration tests (OW_TEST_RUN_ID={run_id}) outlived them")
        return 0
    print(f"{len(left)} process(es) started by this build's integration tests (OW_TEST_RUN_ID={run_id}) "
          "still run after every test file ended: a test file did not stop what it started")
    for pid in sorted(left):
        print(f"  pid {pid}: {left[pid][:300]}")
    stop(sorted(left))
    print("stopped them now (TERM, then KILL); find the file that starts such a server and stop it "
          "in its teardown_file, or start it with tests/lib/servers.bash, whose watchdog stops it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
