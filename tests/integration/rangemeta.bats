#!/usr/bin/env bats
# METADATA by byte ranges (src/wheel/rangemeta.c), the way offwheel reads
# wheels of an index without PEP 658 files: tests/tools/owrangemeta reads
# only the ranges the module asks for (pread standing in for HTTP Range
# requests).  The oracle is `unzip -p WHEEL '*.dist-info/METADATA'` on real
# wheels from PyPI built by different tools (setuptools, flit, hatch,
# maturin, PyTorch's own, NVIDIA's), cached under $XDG_CACHE_HOME; wheels
# written by Python's zipfile (ZIP64 forced, a long comment, names in
# another case) and damaged ones must be read or refused with a reason.

setup_file() {
	export CACHE="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}/wheels"
	export RM="$OW_BUILD_DIR/tests/owrangemeta"
	mkdir -p "$CACHE"
	export REAL="filelock==3.19.1 jinja2==3.1.6 markupsafe==3.0.2 pydantic-core==2.41.5 numpy==2.3.4"
}

fetch_real() {
	(cd "$CACHE" && timeout 300 python3 -m pip download -q --no-deps --only-binary=:all: \
		--python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
		--platform manylinux2014_x86_64 $REAL) >/dev/null 2>&1
}

same_as_unzip() { # WHEEL: prints the reads line
	local w=$1
	"$RM" "$w" >"$BATS_TEST_TMPDIR/rm.txt" 2>"$BATS_TEST_TMPDIR/rm.err" || { cat "$BATS_TEST_TMPDIR/rm.err"; return 1; }
	unzip -p "$w" '*.dist-info/METADATA' | cmp - "$BATS_TEST_TMPDIR/rm.txt" || { echo "differs: $w"; return 1; }
	cat "$BATS_TEST_TMPDIR/rm.err"
}

@test "real PyPI wheels: the METADATA read by ranges is unzip's, for a few kB" {
	fetch_real || ls "$CACHE"/filelock-3.19.1-*.whl >/dev/null 2>&1 ||
		skip "PyPI cannot be reached and $CACHE has none of: $REAL"
	n=0
	for w in "$CACHE"/*.whl; do
		line=$(same_as_unzip "$w")
		echo "$line $(basename "$w")"
		read -r _ reads _ bytes _ size <<<"$line"
		# at most three reads, and never more than the tail, the central
		# directory and the member: well under the whole file for big wheels
		[ "$reads" -le 3 ]
		if [ "$size" -gt 4000000 ]; then
			[ $((bytes * 50)) -lt "$size" ] || { echo "read $bytes of $size"; false; }
		fi
		n=$((n + 1))
	done
	[ "$n" -ge 5 ]
}

@test "zipfile-made wheels: ZIP64, a long comment, a dist-info in another case; damage is refused" {
	d=$BATS_TEST_TMPDIR/w
	mkdir -p "$d"
	python3 - "$d" <<'PY'
import sys, zipfile, os
d = sys.argv[1]
meta = b"Metadata-Version: 2.1\nName: Foo.Bar\nVersion: 1.0\n\n" + b"x" * 5000 + b"\n"
def wheel(name, members, **kw):
    p = os.path.join(d, name)
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in members:
            with z.open(n, "w", force_zip64=kw.get("zip64", False)) as f:
                f.write(data)
        if "comment" in kw:
            z.comment = kw["comment"]
    return p
big = [("foo_bar/big%d.bin" % i, os.urandom(20000)) for i in range(5)]
wheel("foo_bar-1.0-py3-none-any.whl", big + [("foo_bar-1.0.dist-info/METADATA", meta)])
wheel("zip64-1.0-py3-none-any.whl", big + [("zip64-1.0.dist-info/METADATA", meta)], zip64=True)
wheel("comment-1.0-py3-none-any.whl", big + [("comment-1.0.dist-info/METADATA", meta)], comment=b"c" * 65000)
wheel("Foo_Bar-2.0-py3-none-any.whl", big + [("Foo.Bar-2.0.dist-info/METADATA", meta)])
wheel("nometa-1.0-py3-none-any.whl", big + [("nometa-1.0.dist-info/RECORD", b"")])
wheel("other-1.0-py3-none-any.whl", big + [("evil-9.9.dist-info/METADATA", meta)])
wheel("two-1.0-py3-none-any.whl", [("two-1.0.dist-info/METADATA", meta), ("Two-1.0.dist-info/METADATA", meta)])
p = wheel("trunc-1.0-py3-none-any.whl", big + [("trunc-1.0.dist-info/METADATA", meta)])
data = open(p, "rb").read(); open(p, "wb").write(data[:-10])
p = wheel("trail-1.0-py3-none-any.whl", big + [("trail-1.0.dist-info/METADATA", meta)])
open(p, "ab").write(b"garbage after the end record")
p = wheel("flip-1.0-py3-none-any.whl", big + [("flip-1.0.dist-info/METADATA", meta)])
b = bytearray(open(p, "rb").read()); i = b.rfind(b"flip-1.0.dist-info/METADATA", 0, len(b) - 200)
b[i + 60] ^= 0xFF; open(p, "wb").write(bytes(b))  # a byte of the compressed METADATA
PY
	for w in foo_bar-1.0 zip64-1.0 comment-1.0 Foo_Bar-2.0; do
		same_as_unzip "$d/$w-py3-none-any.whl"
	done
	check() { # WHEEL PHRASE
		run "$RM" "$d/$1-py3-none-any.whl"
		[ "$status" -eq 3 ] || { echo "$1: exit $status"; false; }
		[[ "$output" == *"$2"* ]] || { echo "$1: $output"; false; }
	}
	check nometa-1.0 "no nometa-1.0.dist-info/METADATA in the wheel"
	check other-1.0 "no other-1.0.dist-info/METADATA in the wheel"
	check two-1.0 "two METADATA members"
	check trunc-1.0 "no ZIP end record"
	check trail-1.0 "no ZIP end record"
	check flip-1.0 "flip-1.0-py3-none-any.whl"
}

@test "the real torch wheel (when the audit tests have cached it): 1.3 MB of 539 MB" {
	w=$(ls "$CACHE"/torch-2.15.0-*.whl 2>/dev/null | head -1)
	[ -n "$w" ] || skip "no torch 2.15.0 wheel in $CACHE (the real-wheel audit tests download it)"
	line=$(same_as_unzip "$w")
	echo "$line"
	read -r _ reads _ bytes _ size <<<"$line"
	[ $((bytes * 100)) -lt "$size" ]
}
