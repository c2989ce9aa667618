#!/usr/bin/env bats
# PEP 751 lock files on the stick: `export` writes pylock.<target>.toml beside
# each requirements file.  Checked with Python's own TOML reader (every
# package's wheel is on the stick with the size and sha256 SHA256SUMS has),
# with `offwheel check` (it is signed like every file), and installed with uv
# from PyPI, offline, into a fresh venv — uv refusing the file for another
# interpreter.  The sample index, served by nginx.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV"
	export UVENV="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	PY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	export TARGET="cu128-cp${PY/./}-manylinux_2_28_$(uname -m)"
	"$OFFWHEEL" --home "$SRV/ws" sync --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cu128 --python "$PY,3.12" --platform linux-x86_64,windows-x86_64 >/dev/null
	"$OFFWHEEL" keygen "$SRV/k.sec" >/dev/null
	"$OFFWHEEL" --home "$SRV/ws" export "$SRV/stick" --all-sets --sign "$SRV/k.sec" >/dev/null
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

@test "one lock file per requirements file, each package's wheel on the stick with its size and sha256" {
	n_req=$(ls "$SRV/stick/requirements" | wc -l)
	[ "$n_req" -ge 2 ]
	[ "$(ls "$SRV/stick"/pylock.*.toml | wc -l)" -eq "$n_req" ]
	run python3 - "$SRV/stick" <<'PY'
import hashlib, os, re, sys, tomllib
root = sys.argv[1]
sums = dict(reversed(l.split(None, 1)) for l in open(os.path.join(root, "SHA256SUMS")).read().splitlines())
sums = {k.strip().lstrip("*"): v for k, v in sums.items()}
n = 0
for fn in sorted(os.listdir(root)):
    if not fn.startswith("pylock."):
        continue
    assert re.fullmatch(r"pylock\.[^.]+\.toml", fn), fn           # PEP 751's file name rule
    target = fn[len("pylock."):-len(".toml")]
    lock = tomllib.load(open(os.path.join(root, fn), "rb"))
    assert lock["lock-version"] == "1.0", fn
    py = re.match(r"[a-z0-9]+-cp(\d)(\d+)", target)
    assert lock["requires-python"] == "==%s.%s.*" % py.groups(), lock["requires-python"]
    assert "python_version == '%s.%s'" % py.groups() in lock["environments"][0]
    reqs = open(os.path.join(root, "requirements", target + ".txt")).read()
    pins = set(re.findall(r"^([A-Za-z0-9._-]+)==(\S+) --hash=sha256:([0-9a-f]{64})$", reqs, re.M))
    got = set()
    for p in lock["packages"]:
        (w,) = p["wheels"]
        path = os.path.join(root, w["path"])
        data = open(path, "rb").read()
        assert len(data) == w["size"], w["path"]
        assert hashlib.sha256(data).hexdigest() == w["hashes"]["sha256"] == sums[w["path"]]
        got.add((p["name"], p["version"], w["hashes"]["sha256"]))
    assert got == pins, (fn, got ^ pins)                           # the same set as pip's file
    assert fn in sums, fn                                          # signed like every file
    n += len(got)
print("%d packages checked" % n)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "offwheel check verifies the lock files and catches one that was changed" {
	run "$OFFWHEEL" check "$SRV/stick" --pubkey "$SRV/k.pub" --state "$SRV/state.json"
	echo "$output"
	[ "$status" -eq 0 ]
	cp -a "$SRV/stick" "$SRV/stick2"
	sed -i 's/^requires-python = .*/requires-python = ">=3"/' "$SRV/stick2/pylock.$TARGET.toml"
	run "$OFFWHEEL" check "$SRV/stick2" --pubkey "$SRV/k.pub" --state "$SRV/state2.json"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"pylock.$TARGET.toml"* ]]
}

@test "uv installs the lock file offline into a fresh venv, and refuses it for another Python" {
	if [ ! -x "$UVENV/bin/uv" ]; then
		rm -rf "$UVENV"
		{ python3 -m venv "$UVENV" && timeout 180 "$UVENV/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv is not in $UVENV and could not be installed from PyPI (no network?): the uv install did not run"
	fi
	cd "$SRV/stick"
	"$UVENV/bin/uv" venv -q --no-config -p python3 "$SRV/venv"
	run "$UVENV/bin/uv" pip install --no-config --offline --no-index --no-cache \
		--python "$SRV/venv/bin/python" -r "pylock.$TARGET.toml"
	echo "$output"
	[ "$status" -eq 0 ]
	run "$SRV/venv/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.__version__)'
	[ "$status" -eq 0 ]
	[[ $output == *+cu128 ]]
	other=$(ls pylock.cu128-cp312-manylinux*.toml)
	if [ "pylock.$TARGET.toml" != "$other" ]; then
		run "$UVENV/bin/uv" pip install --no-config --offline --no-index --no-cache \
			--python "$SRV/venv/bin/python" -r "$other"
		echo "$output"
		[ "$status" -ne 0 ]
		[[ $output == *"incompatible with the"*"Python requirement: \`==3.12.*\`"* ]]
	fi
}

@test "each requirements file and INSTALL.txt name the interpreter, with a guard that stops the wrong one before pip" {
	for req in "$SRV/stick"/requirements/*.txt; do
		t=$(basename "$req" .txt)
		py=$(sed -E 's/^[a-z0-9]+-cp([0-9])([0-9]+).*/\1.\2/' <<<"$t")
		sed -n 2p "$req" | grep -qF "# for CPython $py on "
		guard=$(sed -n 3p "$req" | sed 's/^#  *//')
		grep -qF "$guard" "$SRV/stick/INSTALL.txt"
		# pip still reads the file: the lines are comments
		[ "$(grep -c -- '--hash=sha256:' "$req")" -eq "$(grep -vc '^#' "$req")" ]
		if [[ $t == *-win* ]]; then
			# cmd and PowerShell: one "..." argument with only '...' inside (no
			# POSIX single-quoted program, which cmd passes quotes and all), and
			# `python`, what a Windows venv has; run here as a shell would split it
			sed -n 2p "$req" | grep -qF "(cmd or PowerShell)"
			[[ $guard == 'python -c "'*'"' ]]
			[[ ${guard:11:${#guard}-12} != *'"'* ]]
			guard="python3 ${guard#python }"
		else
			[[ $guard == "python3 -c '"* ]]
		fi
		run bash -c "$guard"
		if [ "$py" = "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" ]; then
			[ "$status" -eq 0 ]
		else
			[ "$status" -eq 1 ]
			[[ $output == "this set is for CPython $py, not "* ]]
		fi
	done
}
