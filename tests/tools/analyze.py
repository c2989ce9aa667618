#!/usr/bin/env python3
"""analyze.py - GCC's static analyzer (-fanalyzer) over every file of src/.

    analyze.py BUILD_DIR [--jobs N]

Compiles each src/ file of BUILD_DIR/compile_commands.json again with
-fanalyzer (the build's own flags, -O0, output thrown away) and fails when
the analyzer warns.  A warning the analyzer gives on code that is right is
silenced where it stands, with the reason, by a line

    /* analyzer: <why> */

right above the line it names (the next line is then not reported); the
count of those is printed, so that they stay few.  What one file alone
cannot show the analyzer (that ow_err returns its code) it is told by
analyze_model.h, included before each file.  Exit 0 clean, 1 warnings, 77
(ctest's skip) when the compiler has no -fanalyzer."""
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

WARN = re.compile(r"^(/[^:]+):(\d+):(\d+): warning: (.*\[-Wanalyzer-[a-z-]+\])$")


MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "analyze_model.h")
MODEL_DEFINED_IN = "/src/util/error.c"


def command_for(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT"):
            skip = True
            continue
        if a in ("-MD", "-Werror") or a.startswith("-O") or a.startswith("-fsanitize"):
            continue
        out.append(a)
    model = [] if entry["file"].endswith(MODEL_DEFINED_IN) else ["-include", MODEL]
    return out + model + ["-O0", "-fanalyzer", "-o", os.devnull]


def run(entry):
    p = subprocess.run(command_for(entry), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], p.returncode, p.stderr


def silenced(path, line, cache):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            cache[path] = f.read().split("\n")
    lines = cache[path]
    return line >= 2 and "/* analyzer:" in lines[line - 2]


def stale_reasons(entries, used):
    """The /* analyzer: */ lines of the files analysed whose next line drew no
    warning: a reason left behind by code that changed."""
    stale = []
    for path in sorted({os.path.realpath(e["file"]) for e in entries}):
        with open(path, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                if "/* analyzer:" in text and (path, n) not in used:
                    stale.append((path, n))
    return stale


def main():
    build = sys.argv[1]
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else os.cpu_count()
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = [e for e in json.load(f) if "/src/" in e["file"]]
    if not entries:
        print(f"analyze: no src/ file in {build}/compile_commands.json", file=sys.stderr)
        return 1
    probe = subprocess.run([command_for(entries[0])[0], "-fanalyzer", "-E", "-x", "c", os.devnull],
                           capture_output=True)
    if probe.returncode != 0:
        print("analyze: SKIP: this compiler has no -fanalyzer")
        return 77
    found, quiet, cache, used = [], 0, {}, set()
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for path, rc, err in ex.map(run, entries):
            if rc != 0:
                print(f"analyze: {path} did not compile:\n{err}", file=sys.stderr)
                return 1
            for line in err.split("\n"):
                m = WARN.match(line)
                if not m:
                    continue
                if silenced(m.group(1), int(m.group(2)), cache):
                    quiet += 1
                    used.add((os.path.realpath(m.group(1)), int(m.group(2)) - 1))
                else:
                    found.append(line)
    for w in sorted(set(found)):
        print(w, file=sys.stderr)
    stale = stale_reasons(entries, used)
    for path, line in stale:
        print(f"{path}:{line}: an analyzer reason that silences nothing: remove it",
              file=sys.stderr)
    print(f"analyze: {len(entries)} files, {len(set(found))} warnings, {quiet} silenced with a "
          f"reason, {len(stale)} stale reasons")
    return 1 if found or stale else 0


if __name__ == "__main__":
    sys.exit(main())
