#!/usr/bin/env bats
# tests/tools/make-fixture-index: the sample index every network test stands on.
# It must be deterministic, in the real page format, self-consistent (hashes,
# PEP 658 files, RECORDs, GPU payloads), carry the documented irregularities,
# and be something the real pip resolves and installs from.

setup_file() {
	export SRC="${OW_SOURCE_DIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
	export GEN="$SRC/tests/tools/make-fixture-index"
	export CHECK="$BATS_TEST_DIRNAME/fixture_index_check.py"
	export T="$BATS_FILE_TMPDIR"
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	"$GEN" "$T/a" >/dev/null
}

teardown() {
	for p in "$T"/*.pid; do
		[ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null
		rm -f "$p"
	done
	true
}

tree_sums() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve DIR/www and DIR/www2 on two loopback ports; sets P1 and P2
serve_two_hosts() {
	local dir=$1
	P1=$(free_port)
	P2=$(free_port)
	while [ "$P2" = "$P1" ]; do P2=$(free_port); done
	"$GEN" "$dir" --host "http://127.0.0.1:$P1" --host2 "http://127.0.0.1:$P2" >/dev/null
	python3 -m http.server "$P1" --bind 127.0.0.1 -d "$dir/www" >"$T/h1.log" 2>&1 &
	echo $! >"$T/h1.pid"
	python3 -m http.server "$P2" --bind 127.0.0.1 -d "$dir/www2" >"$T/h2.log" 2>&1 &
	echo $! >"$T/h2.pid"
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$P1/whl/nightly/" >/dev/null &&
			curl -sf -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/" >/dev/null && return 0
		sleep 0.1
	done
	echo "http.server did not come up"
	return 1
}

host_python() {
	python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")'
}

@test "two runs give byte-identical trees" {
	"$GEN" "$T/b" >/dev/null
	tree_sums "$T/a" >"$T/a.sums"
	tree_sums "$T/b" >"$T/b.sums"
	[ "$(wc -l <"$T/a.sums")" -gt 1500 ]
	diff -u "$T/a.sums" "$T/b.sums"
	# a re-run over an existing tree replaces it, leaving nothing stale
	touch "$T/b/www/whl/nightly/cpu/stale.whl"
	"$GEN" "$T/b" >/dev/null
	tree_sums "$T/b" | diff -u "$T/a.sums" -
}

@test "pages parse with the manifest's link counts; hashes, .metadata, RECORDs and GPU payloads hold" {
	run python3 "$CHECK" "$T/a" --fatbin-dir "$SRC/tests/fixtures/fatbin"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"checked 22"*" pages, "*" 0 problems"* ]]
}

@test "the checker catches a changed .metadata, a changed wheel and a missing link" {
	cp -a "$T/a" "$T/bad"
	meta=$(ls "$T"/bad/www/whl/nightly/cu128/torch-2.10.0.dev20251021+cu128-cp311-*x86_64.whl.metadata)
	sed -i 's/^Requires-Dist: jinja2$/Requires-Dist: jinja3/' "$meta"
	whl=$(ls "$T"/bad/www/whl/cpu/torch-2.9.1+cpu-cp312-cp312-win_amd64.whl)
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$whl" 200
	page="$T/bad/www/whl/nightly/cu126/torchaudio/index.html"
	grep -q '>torchaudio-2.10.0.dev20251018+cu126-cp312-cp312-win_amd64.whl<' "$page"
	sed -i '/>torchaudio-2.10.0.dev20251018+cu126-cp312-cp312-win_amd64.whl</d' "$page"
	run python3 "$CHECK" "$T/bad" --fatbin-dir "$SRC/tests/fixtures/fatbin"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *".metadata differs from METADATA"* ]]
	[[ "$output" == *"torch-2.9.1+cpu-cp312-cp312-win_amd64.whl: published"* ]]
	[[ "$output" == *"nightly/cu126/torchaudio/index.html: "*" links, manifest says"* ]]
	# and the Windows cu126 cp312 target lost its only complete set
	[[ "$output" == *"target nightly cu126 cp312 win_amd64: pages give"* ]]
}

@test "real format: %2B hrefs, second host, hashes on stable only, trailer, no metadata on the oldest day" {
	p="$T/a/www/whl/nightly/cu128/torch/index.html"
	head -4 "$p" | grep -qx '    <h1>Links for torch</h1>'
	tail -1 "$p" | grep -qE '^<!--TIMESTAMP [0-9]+-->$'
	grep -q 'href="/whl/nightly/cu128/torch-2.10.0.dev20251021%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"' "$p"
	grep -q '>torch-2.10.0.dev20251021+cu128-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>' "$p"
	grep -q 'href="https://download-r2.pytorch.org/whl/nightly/cu128/torch-2.10.0.dev20251022%2Bcu128-' "$p"
	[ -f "$T/a/www2/whl/nightly/cu128/torch-2.10.0.dev20251022+cu128-cp312-cp312-manylinux_2_28_x86_64.whl.metadata" ]
	! grep -q '#sha256=' "$p"
	grep '20251018' "$p" | { ! grep -q 'data-core-metadata'; }
	grep '20251019' "$p" | grep -q 'data-core-metadata="sha256='
	grep -q '#sha256=' "$T/a/www/whl/cu128/torch/index.html"
	grep -q 'href="https://download.pytorch.org/whl/nightly/sympy-1.14.0-py3-none-any.whl#sha256=' \
		"$T/a/www/whl/nightly/cpu/sympy/index.html"
	grep -q 'data-requires-python="&gt;=3.11"' "$T/a/www/whl/nightly/cpu/numpy/index.html"
	grep -q '>torch-2.10.0.dev20251021-cp311-none-macosx_11_0_arm64.whl<' "$T/a/www/whl/nightly/cpu/torch/index.html"
	grep -q '>torch-2.10.0.dev20251021-cp311-cp311-manylinux_2_28_aarch64.whl<' "$T/a/www/whl/nightly/cpu/torch/index.html"
	! grep -q 'cp313t' "$T/a/www/whl/nightly/cpu/torchvision/index.html"
}

@test "MANIFEST records the irregularities and the expected sets they cause" {
	python3 - "$T/a/MANIFEST.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
kinds = {q["kind"] for q in m["irregularities"]}
need = {"missing-day", "day-off", "stalled-platform", "wrong-hash", "missing-hash",
        "free-threaded", "platform-markers", "second-host", "no-metadata-attrs"}
assert need <= kinds, need - kinds
def target(ch, v, py, plat):
    return next(t for t in m["targets"] if (t["channel"], t["variant"], t["python"], t["platform"]) == (ch, v, py, plat))
t = target("nightly", "cu128", "cp312", "manylinux_2_28_x86_64")
assert t["latest"] == {"torch": "2.10.0.dev20251021+cu128", "torchvision": "0.25.0.dev20251022+cu128",
                       "torchaudio": "2.10.0.dev20251021+cu128"}, t["latest"]
assert t["sets"][0]["missing"] == ["torchvision"] and t["sets"][2]["missing"] == ["torchaudio"]
assert t["closure"]["setuptools"] == "80.9.0" and t["closure"]["pytorch-triton"] == "3.5.0+git7416ffcb"
assert "setuptools" not in target("nightly", "cu128", "cp311", "manylinux_2_28_x86_64")["closure"]
assert "nvidia-cublas-cu12" not in target("nightly", "cu128", "cp312", "manylinux_2_28_aarch64")["closure"]
assert "pytorch-triton" in target("nightly", "cu128", "cp312", "manylinux_2_28_aarch64")["closure"]
w = target("nightly", "cu126", "cp313", "win_amd64")
assert w["latest"]["torch"] == "2.10.0.dev20251018+cu126", w["latest"]
assert "pytorch-triton" not in w["closure"] and "nvidia-cublas-cu12" not in w["closure"]
assert target("nightly", "cpu", "cp312", "macosx_11_0_arm64")["latest"]["torch"] == "2.10.0.dev20251021"
ft = target("nightly", "cu128", "cp313t", "manylinux_2_28_x86_64")
assert ft["latest"] is None and len(ft["sets"]) == 5
assert all(s["missing"] == ["torchvision", "torchaudio"] for s in ft["sets"])
assert target("stable", "cu128", "cp312", "win_amd64")["latest"]["torch"] == "2.10.0+cu128"
wrong = [q for q in m["irregularities"] if q["kind"] == "wrong-hash"][0]
assert wrong["published"] != wrong["actual"]
print("ok")
EOF
}

@test "pip resolves the host target to the manifest's closure (nightly cpu and cu128, stable cu126)" {
	[ -z "${OW_PIP_TOO_OLD:-}" ] || skip "pip < 23.1 misreads PEP 658 metadata whose Name spelling differs (pypa/pip#11847), and PyPI is out of reach for a newer one"
	py=$(host_python)
	grep -q "\"$py\"" "$T/a/MANIFEST.json" || skip "host python $py is not in the sample matrix"
	serve_two_hosts "$T/h"
	for index in nightly/cpu nightly/cu128 cu126; do
		run python3 -m pip install --dry-run --ignore-installed --no-cache-dir --quiet \
			--report "$T/report.json" --pre --only-binary=:all: \
			--index-url "http://127.0.0.1:$P1/whl/$index" --trusted-host 127.0.0.1 \
			torch torchvision torchaudio
		echo "$output"
		[ "$status" -eq 0 ]
		python3 - "$T/report.json" "$T/h/MANIFEST.json" "$index" "$py" <<'EOF'
import json, re, sys
report, manifest, index, py = sys.argv[1:]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
got = {norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.load(open(report))["install"]}
channel, variant = index.split("/") if "/" in index else ("stable", index)
t = next(t for t in json.load(open(manifest))["targets"] if t["channel"] == channel
         and t["variant"] == variant and t["python"] == py and t["platform"] == "manylinux_2_28_x86_64")
assert got == t["closure"], (index, got, t["closure"])
print(index, "pip agrees:", got["torch"], got["torchvision"], got["torchaudio"], len(got), "projects")
EOF
	done
	# torch 2.10.0.dev20251022 lives on the second host: pip read its metadata there
	grep -q 'GET /whl/nightly/cu128/torch-2.10.0.dev20251022' "$T/h2.log"
}

@test "pip downloads the closure (verifying stable hashes), installs it offline and imports torch" {
	[ -z "${OW_PIP_TOO_OLD:-}" ] || skip "pip < 23.1 misreads PEP 658 metadata whose Name spelling differs (pypa/pip#11847), and PyPI is out of reach for a newer one"
	py=$(host_python)
	grep -q "\"$py\"" "$T/a/MANIFEST.json" || skip "host python $py is not in the sample matrix"
	serve_two_hosts "$T/h"
	pipx() { python3 -m pip "$@" --no-cache-dir --quiet --only-binary=:all: --trusted-host 127.0.0.1; }
	pipx download --pre --index-url "http://127.0.0.1:$P1/whl/nightly/cu128" -d "$T/dl" \
		torch torchvision torchaudio
	# stable 2.10.0 cu128 sits on the second host, with #sha256 that pip checks
	pipx download --no-deps --index-url "http://127.0.0.1:$P1/whl/cu128" -d "$T/dl2" torch==2.10.0
	grep -q 'GET /whl/cu128/torch-2.10.0%2Bcu128' "$T/h2.log"
	# the deliberately wrong published hash: pip refuses the file
	run python3 -m pip download --no-cache-dir --no-deps --only-binary=:all: --trusted-host 127.0.0.1 \
		--platform win_amd64 --python-version 3.12 --implementation cp --abi cp312 \
		--index-url "http://127.0.0.1:$P1/whl/cu128" -d "$T/dl3" torchvision==0.24.1
	[ "$status" -ne 0 ]
	[[ "$output" == *"DO NOT MATCH THE HASHES"* ]]
	python3 -m venv "$T/venv"
	"$T/venv/bin/python" -m pip install --quiet --no-index --find-links "$T/dl" torch torchvision torchaudio
	run "$T/venv/bin/python" -c '
import os, torch, torchvision, torchaudio
print(torch.__version__, torch.version.cuda, torchvision.__version__, torchaudio.__version__)
print(os.path.getsize(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")))'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "2.10.0.dev20251021+cu128 12.8 0.25.0.dev20251022+cu128 2.10.0.dev20251021+cu128" ]
	[ "${lines[1]}" = "$(stat -c %s "$SRC/tests/fixtures/fatbin/libtorch_cuda_cu128.so")" ]
}

@test "--big N --pages-only: pages and .metadata for N dates, no nightly wheels" {
	"$GEN" "$T/big" --big 6 --pages-only >/dev/null
	python3 - "$T/big" <<'EOF'
import json, os, re, sys
from html.parser import HTMLParser
root = sys.argv[1]
m = json.load(open(os.path.join(root, "MANIFEST.json")))
assert len(m["channels"]["nightly"]["dates"]) == 6
assert len(m["channels"]["nightly"]["variants"]) >= 12
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.hrefs = []
    def handle_starttag(self, tag, attrs):
        if tag == "a": self.hrefs.append(dict(attrs))
wheels = full_day = 0
first = m["channels"]["nightly"]["dates"][0]
for rel, info in m["pages"].items():
    p = P(); p.feed(open(os.path.join(root, rel)).read())
    assert len(p.hrefs) == info["links"], rel
    if "/nightly/" in rel and info["project"] in ("torch", "torchvision", "torchaudio") and \
            re.search(r"/nightly/[^/]+/[^/]+/index.html$", rel):
        for a in p.hrefs:
            wheels += 1
            full_day += f".dev{first}" in a["href"]
            path = re.sub(r"^(https://download(-r2)?\.pytorch\.org)?/", "", a["href"])
            base = os.path.join(root, "www2" if "-r2." in a["href"] else "www", path.replace("%2B", "+"))
            assert not os.path.exists(base), base
            assert ("data-core-metadata" in a) == os.path.exists(base + ".metadata"), base
# the irregular days are the last five: every further date adds a full one
projected = wheels + 54 * full_day
print(f"{wheels} nightly wheel links, {full_day} on a full date -> {projected} for --big 60")
assert projected >= 50000
EOF
}

@test "--large-files: streamed valid wheels with a big stored member, hashes published" {
	"$GEN" "$T/large" --large-files 8 --large-count 2 >/dev/null
	ls "$T"/large/www/whl/large/cu128/*.whl | wc -l | grep -qx 2
	for w in "$T"/large/www/whl/large/cu128/*.whl; do
		[ "$(stat -c %s "$w")" -gt $((8 << 20)) ]
		python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None' "$w"
	done
	run python3 "$CHECK" "$T/large" --fatbin-dir "$SRC/tests/fixtures/fatbin"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "--absolute-hrefs with file:// hosts: pip resolves straight from the tree, no server" {
	[ -z "${OW_PIP_TOO_OLD:-}" ] || skip "pip < 23.1 misreads PEP 658 metadata whose Name spelling differs (pypa/pip#11847), and PyPI is out of reach for a newer one"
	d="$T/f"
	"$GEN" "$d" --absolute-hrefs --host "file://$d/www" --host2 "file://$d/www2" >/dev/null
	! grep -q 'href="/whl' "$d/www/whl/nightly/cu128/torch/index.html"
	run python3 -m pip install --dry-run --ignore-installed --no-cache-dir --pre --only-binary=:all: \
		--index-url "file://$d/www/whl/nightly/cu128" torch torchvision torchaudio
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"torch-2.10.0.dev20251021+cu128 torchaudio-2.10.0.dev20251021+cu128 torchvision-0.25.0.dev20251022+cu128"* ]]
}

@test "the generator's own version, specifier and marker evaluator agrees with PyPA's packaging" {
	py=
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import packaging' 2>/dev/null && { py=$p; break; }
	done
	[ -n "$py" ] || skip "no python3 with packaging (apt-get install python3-packaging)"
	run "$py" "$OW_SOURCE_DIR/tests/tools/test_fixture_oracle.py"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *" 0 differ"* ]]
	n=$(grep -o '^[0-9]* cases' <<<"$output" | cut -d' ' -f1)
	[ "$n" -ge 5000 ] # the plan's own versions and pins were read, not just the hand-picked ones
}
