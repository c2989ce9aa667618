#!/usr/bin/env python3
"""Each third-party library is included by its one module (docs/layout.md).

Scans src/ for #include <...> of each library's headers and names every file
that includes one outside the files allowed for it.  libcurl's header comes
in through src/net/httpcurl.h alone, and only the net's http modules
(src/net/http*.c, and httpint.h, which they share) may include that one.  Exit 1 naming each file."""
import os, re, sys

root = sys.argv[1]
RULES = [  # (header pattern, files allowed to include it, relative to src/)
    (r"curl/", {"net/httpcurl.h"}),
    (r"libxml/", {"index/html.c"}),
    (r"archive(_entry)?\.h$", {"wheel/wheel.c"}),
    (r"sqlite3\.h$", {"store/db.c"}),
    (r"openssl/", {"util/digest.c"}),
    (r"(lz4|zstd)\.h$", {"util/decompress.c"}),
    (r"jansson\.h$", {"index/simplejson.c", "export/exportjson.c", "cli/*"}),
]
SYS = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)
LOCAL = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def allowed(rel, ok):
    return rel in ok or any(o.endswith("/*") and rel.startswith(o[:-1]) for o in ok)


bad, n = [], 0
src = os.path.join(root, "src")
for d, _, files in os.walk(src):
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        rel = os.path.relpath(os.path.join(d, f), src)
        text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
        n += 1
        for inc in SYS.findall(text):
            for pat, ok in RULES:
                if re.match(pat, inc) and not allowed(rel, ok):
                    bad.append("src/%s includes <%s>, which only %s may" % (rel, inc, ", ".join(sorted(ok))))
        if "httpcurl.h" in LOCAL.findall(text) and not re.match(r"net/http[a-z]*\.c$|net/httpint\.h$", rel):
            bad.append("src/%s includes httpcurl.h (libcurl): only src/net/http*.c (and httpint.h) may" % rel)
for b in bad:
    print(b)
print("%d files checked for third-party includes, %d outside their module" % (n, len(bad)))
sys.exit(1 if bad or n == 0 else 0)
