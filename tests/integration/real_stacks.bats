#!/usr/bin/env bats
# Whole stacks of REAL metadata (scripts/real-metadata-index stack, files
# tests/fixtures/real-metadata/stack-*.json), each served in a lab's usual
# layout: torch, torchvision and torchaudio from a PyTorch variant root,
# everything else from a PyPI-shaped index (--extra-index-url), by nginx.
#   a          torch, transformers, accelerate, datasets
#   b          torch, numpy<2, scipy, pandas, scikit-learn (numpy<2 has no
#              wheel for Python 3.13: no solution there, for uv too)
#   c          torch, xformers (xformers pins torch exactly; on aarch64 and
#              macOS only its pre-releases have wheels, which then count)
#   d          jupyterlab, torch, matplotlib
#   backtrack  torch<2.13, torchvision, transformers, tokenizers<0.21 (the
#              newest torchvision and transformers must go back)
#   unsat      torch, transformers==4.46.0 (yanked, pinned exactly),
#              tokenizers>=0.21: no solution
# Oracles: uv's answer on PyPI when the snapshot was taken, for 12 targets
# (4 platforms x Python 3.11-3.13), uv on the fixture (the fixture misleads
# no one), and pip for the host's target.
#
# Regenerate (network): scripts/real-metadata-index stack NAME LINE...

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

PYS=3.11,3.12,3.13
PLATS=linux-x86_64,linux-aarch64,windows-x86_64,macosx_14_0_arm64
STACKS="a b c d backtrack unsat"

setup_file() {
	export SRV=$(mktemp -d) FIX=$OW_SOURCE_DIR/tests/fixtures/real-metadata
	mkdir -p "$SRV/www"
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_NGINX_DIR OW_NGINX_LOG
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
	export UVENV="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	local s
	for s in $STACKS; do
		"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV/www/$s" --snapshot "$FIX/stack-$s.json" \
			--layout lab --host "$OW_HTTP_URL/$s/www" >/dev/null
		jq -r '.requirements[]' "$FIX/stack-$s.json" >"$SRV/$s.req"
		# every target in one call; exit 4 (a target without a solution) is judged per target
		ow_stack "$s" --json resolve --python "$PYS" --platform "$PLATS" -r "$SRV/$s.req" \
			>"$SRV/$s.json" 2>"$SRV/$s.err" && echo 0 >"$SRV/$s.rc" || echo $? >"$SRV/$s.rc"
	done
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# offwheel GLOBAL... CMD ARGS... on stack S's indexes and workspace
ow_stack() {
	local s=$1 args=() global=()
	shift
	while [ $# -gt 0 ] && [[ $1 == --* ]]; do global+=("$1"); shift; done
	args=("$1") && shift
	"$OFFWHEEL" --home "$SRV/ws-$s" "${global[@]}" "${args[@]}" --index-url "$OW_HTTP_URL/$s/www/whl" \
		--variant cu130 --extra-index-url "$OW_HTTP_URL/$s/www/simple" \
		--trusted-host "127.0.0.1:$OW_HTTP_PORT" "$@"
}

exp_closure() { jq -r --arg t "$2" '.targets[$t] // [] | .[]' "$SRV/www/$1/EXPECTED.json" | sort; }
exp_targets() { jq -r '.targets | keys[]' "$SRV/www/$1/EXPECTED.json"; }
ow_closure() { jq -r --arg t "cu130 $2" '.targets[] | select(.target == $t) | .members[] | "\(.project)==\(.version)"' "$1" | sort; }

# Compare stack S with uv's answer on PyPI, target by target: the same
# closure where uv found one; where uv found none, no solution either, and
# offwheel's reason names what uv's names (every requirement in uv's "you
# require X" and "A depends on B" clauses: each name and version number).
compare_stack() {
	local s=$1 t bad=() uverr
	[ -s "$SRV/$s.json" ] || { echo "offwheel printed nothing for stack $s (exit $(cat "$SRV/$s.rc")):"; cat "$SRV/$s.err"; return 1; }
	for t in $(exp_targets "$s"); do
		uverr=$(jq -r --arg t "$t" '.uv_errors[$t] // empty' "$SRV/www/$s/EXPECTED.json")
		if [ -n "$uverr" ]; then
			python3 - "$SRV/$s.json" "$t" "$uverr" <<'EOF' || bad+=("$t")
import json, re, sys
doc, t, uv = json.load(open(sys.argv[1])), "cu130 " + sys.argv[2], sys.argv[3]
tg = [x for x in doc["targets"] if x["target"] == t]
if not tg or tg[0]["complete"] or not tg[0].get("error"):
    sys.exit(f"== {sys.argv[2]}: uv found no solution, offwheel says complete: {tg and tg[0].get('members')}")
ours = tg[0]["error"]
named = re.findall(r"you require (\S+?)[,.]?\s", uv) + \
        [x for pair in re.findall(r"(\S+) depends on (\S+?)[,.]?\s", uv) for x in pair]
# the target's tag uv says no wheel has ("a matching Python ABI tag (e.g., `cp313`)")
missing = [f"`{t}`" for t in re.findall(r"matching [A-Za-z ]*tag \(e\.g\., `([^`]+)`\)", uv)
           if t not in ours]
for req in named:
    m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(.*)", req)
    words = [m.group(1)] + re.findall(r"\d+(?:\.\d+)*", m.group(2))
    missing += [f"{w} (of {req})" for w in words if w not in ours]
print(f"{sys.argv[2]}: uv names {named}; offwheel: {ours}")
if not named or missing:
    sys.exit(f"== {sys.argv[2]}: offwheel's reason does not name {missing or 'anything uv names'}")
EOF
			continue
		fi
		exp_closure "$s" "$t" >"$BATS_TEST_TMPDIR/want.txt"
		ow_closure "$SRV/$s.json" "$t" >"$BATS_TEST_TMPDIR/got.txt"
		if ! diff -u --label "uv-on-PyPI $t" --label "offwheel $t" "$BATS_TEST_TMPDIR/want.txt" \
			"$BATS_TEST_TMPDIR/got.txt"; then
			jq -r --arg t "cu130 $t" '.targets[] | select(.target == $t) | "complete=\(.complete) \(.error // "")"' "$SRV/$s.json"
			bad+=("$t")
		fi
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "stack $s: offwheel disagrees with uv on ${#bad[@]} of 12 targets: ${bad[*]}"; return 1; }
	# exit 0 when every target has a solution, 4 when some has none
	local want_rc=0
	[ "$(jq '.uv_errors | length' "$SRV/www/$s/EXPECTED.json")" -eq 0 ] || want_rc=4
	[ "$(cat "$SRV/$s.rc")" -eq "$want_rc" ] || { echo "exit $(cat "$SRV/$s.rc"), not $want_rc"; cat "$SRV/$s.err"; return 1; }
}

@test "stack a (torch, transformers, accelerate, datasets): uv's closure on all 12 targets" {
	compare_stack a
	[ "$(exp_closure a cp312-manylinux_2_28_x86_64 | wc -l)" -gt 60 ]
}

@test "stack b (numpy<2 with the scientific stack): uv's closure on Python 3.11/3.12; on 3.13 no wheel of numpy<2: its ABI tags named, as uv's cp313, with the newest that has one, and nothing chosen" {
	compare_stack b
	[ "$(jq '.uv_errors | length' "$SRV/www/b/EXPECTED.json")" -eq 4 ]
	err=$(jq -r '.targets[] | select(.target == "cu130 cp313-win_amd64") | .error' "$SRV/b.json")
	[[ $err == *"requires numpy<2; numpy 1.26.4 meets them, but its wheels are for cp"*", not this target's cp313 (--python 3.12 would take it); the newest numpy with one is "* ]]
	[[ $err == "no set fits the stack on this target, whichever torch: "* ]]
	jq -e '[.targets[] | select(.python == "cp313") | .versions.torch == null and .missing == [] and .stack_conflict] | length == 4 and all' "$SRV/b.json"
}

@test "stack c (xformers pins torch exactly): uv's closure on all 12 targets, pre-releases where nothing else has a wheel" {
	compare_stack c
	# aarch64 and macOS: only xformers' pre-releases have wheels there, so they count
	exp_closure c cp312-manylinux_2_28_aarch64 | grep -q '^xformers==0\.0\.[0-9]*\.dev'
	exp_closure c cp312-manylinux_2_28_x86_64 | grep -qx 'xformers==0\.0\.[0-9]*'
}

@test "stack d (jupyterlab, torch, matplotlib): uv's closure on all 12 targets" {
	compare_stack d
	[ "$(exp_closure d cp311-win_amd64 | wc -l)" -gt 80 ]
}

@test "stack backtrack (torch<2.13 with the newest torchvision and transformers ruled out): uv's closure on all 12 targets" {
	compare_stack backtrack
	exp_closure backtrack cp312-manylinux_2_28_x86_64 | grep -q '^torch==2\.12\.'
}

@test "stack unsat (transformers==4.46.0 with tokenizers>=0.21): no solution anywhere, the conflict uv names, in JSON and text" {
	compare_stack unsat
	[ "$(jq '.uv_errors | length' "$SRV/www/unsat/EXPECTED.json")" -eq 12 ]
	run ow_stack unsat resolve --offline --python 3.12 --platform linux-x86_64 -r "$SRV/unsat.req"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"transformers 4.46.0 requires tokenizers"* ]]
	[[ $output == *"tokenizers>=0.21"* ]]
}

@test "uv on the fixtures agrees with uv on PyPI: every stack, every target" {
	if [ ! -x "$UVENV/bin/uv" ]; then
		rm -rf "$UVENV"
		{ python3 -m venv "$UVENV" && timeout 180 "$UVENV/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv is not in $UVENV and could not be installed from PyPI (no network?): the uv-on-the-fixture oracle did not run"
	fi
	local s t bad=() plat py env
	for s in $STACKS; do
		for t in $(exp_targets "$s"); do
			py=$(jq -r --arg t "$t" '.platforms[$t].python' "$SRV/www/$s/EXPECTED.json")
			plat=$(jq -r --arg t "$t" '.platforms[$t].uv_python_platform' "$SRV/www/$s/EXPECTED.json")
			env=()
			[[ $t == *macosx* ]] && env=(MACOSX_DEPLOYMENT_TARGET=14.0)
			env "${env[@]}" "$UVENV/bin/uv" pip compile -q --no-config --cache-dir "$SRV/uv-cache" --no-python-downloads \
				--python-platform "$plat" --python-version "$py" --index-url "$OW_HTTP_URL/$s/www/whl/cu130" \
				--extra-index-url "$OW_HTTP_URL/$s/www/simple" --allow-insecure-host 127.0.0.1 \
				--only-binary :all: --no-header --no-annotate "$SRV/$s.req" 2>"$BATS_TEST_TMPDIR/uv.err" |
				sed 's/ *;.*//' | sort >"$BATS_TEST_TMPDIR/uv.txt" || true
			if jq -e --arg t "$t" '.uv_errors | has($t)' "$SRV/www/$s/EXPECTED.json" >/dev/null; then
				grep -q 'No solution found' "$BATS_TEST_TMPDIR/uv.err" || bad+=("$s/$t(uv solved it)")
			elif ! diff -u --label "uv-on-PyPI $s $t" --label "uv-on-fixture" <(exp_closure "$s" "$t") "$BATS_TEST_TMPDIR/uv.txt"; then
				cat "$BATS_TEST_TMPDIR/uv.err"
				bad+=("$s/$t")
			fi
		done
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "the fixtures mislead uv on: ${bad[*]}"; false; }
}

# A target's Python is X.Y.0, as uv's --python-version X.Y: so is pip's below
# (soupsieve 3.0.2 and later need >=3.11.5; a 3.11.7 host takes them).
@test "pip (the host) agrees with offwheel on the host's target, every stack pip can solve" {
	python3 -c 'from importlib.metadata import version; import sys; sys.exit(tuple(map(int, version("pip").split(".")[:2])) < (23, 1))' ||
		skip "pip $(python3 -m pip --version | cut -d' ' -f2) is older than 23.1; scripts/test provides a current one"
	[ "$(uname -sm)" = "Linux x86_64" ] || skip "the host ($(uname -sm)) is none of the 12 targets"
	t=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')-manylinux_2_28_x86_64
	jq -e --arg t "$t" '.targets | has($t)' "$SRV/www/a/EXPECTED.json" >/dev/null || skip "host python is not 3.11-3.13"
	local s n=0 plats=() g
	# pip takes --platform tags as given: manylinux_2_28 and every older one
	for g in $(seq 28 -1 5); do plats+=(--platform "manylinux_2_${g}_x86_64"); done
	plats+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)
	for s in $STACKS; do
		jq -e --arg t "$t" '.uv_errors | has($t)' "$SRV/www/$s/EXPECTED.json" >/dev/null && continue
		python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
			--python-version "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
			"${plats[@]}" --target "$BATS_TEST_TMPDIR/pip-target" \
			--report "$BATS_TEST_TMPDIR/pip.json" --index-url "$OW_HTTP_URL/$s/www/whl/cu130" \
			--extra-index-url "$OW_HTTP_URL/$s/www/simple" --trusted-host 127.0.0.1 -r "$SRV/$s.req"
		python3 -c '
import json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
for i in json.load(open(sys.argv[1]))["install"]:
    print(norm(i["metadata"]["name"]) + "==" + i["metadata"]["version"])' "$BATS_TEST_TMPDIR/pip.json" |
			sort >"$BATS_TEST_TMPDIR/pip.txt"
		diff -u --label "pip $s $t" --label "offwheel" "$BATS_TEST_TMPDIR/pip.txt" <(ow_closure "$SRV/$s.json" "$t")
		n=$((n + 1))
	done
	[ "$n" -ge 4 ]
}

@test "stack a end to end on the host's target: sync, export, then uv installs the lock file and pip the hashed requirements, offline, pip check clean" {
	[ "$(uname -sm)" = "Linux x86_64" ] || skip "the fixture's wheels for the host ($(uname -sm)) are none of the 12 targets"
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	t=cp${py/./}-manylinux_2_28_x86_64
	jq -e --arg t "$t" '.targets | has($t)' "$SRV/www/a/EXPECTED.json" >/dev/null || skip "host python $py is not one of 3.11-3.13"
	ws=$SRV/ws-a-sync
	run --separate-stderr "$OFFWHEEL" --home "$ws" sync --index-url "$OW_HTTP_URL/a/www/whl" --variant cu130 \
		--extra-index-url "$OW_HTTP_URL/a/www/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python "$py" --platform linux-x86_64 -r "$SRV/a.req"
	echo "sync exit $status; $stderr" | tail -5
	[ "$status" -eq 0 ]
	"$OFFWHEEL" keygen "$SRV/a.sec" >/dev/null
	"$OFFWHEEL" --home "$ws" -q export "$SRV/stick-a" --all-sets --sign "$SRV/a.sec"
	"$OFFWHEEL" -q check "$SRV/stick-a" --pubkey "$SRV/a.pub"
	lock=$SRV/stick-a/pylock.cu130-$t.toml
	req=$SRV/stick-a/requirements/cu130-$t.txt
	[ -f "$lock" ] && [ -f "$req" ]
	# the lock file lists exactly uv's closure on PyPI
	python3 -c '
import re, sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
for p in doc["packages"]:
    print(re.sub(r"[-_.]+", "-", p["name"]).lower() + "==" + p["version"])' "$lock" | sort >"$BATS_TEST_TMPDIR/lock.txt"
	diff -u --label "uv-on-PyPI $t" --label "pylock" <(exp_closure a "$t") "$BATS_TEST_TMPDIR/lock.txt"
	# upload-time (a TOML date-time) where the index gave one: PyPI's, from the PEP 691 JSON pages
	python3 - "$lock" "$FIX/stack-a.json" <<'PY'
import datetime, json, sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))
real = {f["filename"]: f.get("upload_time") for f in json.load(open(sys.argv[2]))["files"]}
n = 0
for p in lock["packages"]:
    for w in p["wheels"]:
        if "upload-time" in w:
            got = w["upload-time"]
            want = datetime.datetime.fromisoformat(real[w["name"]].replace("Z", "+00:00"))
            assert got == want, (w["name"], got, want)
            n += 1
print(f"{n} wheels with their upload-time")
assert n >= 10, n
PY
	cd "$SRV/stick-a"
	# pip: the hashed requirements, no index, into a fresh venv
	python3 -m venv "$BATS_TEST_TMPDIR/vpip"
	"$BATS_TEST_TMPDIR/vpip/bin/pip" install -q --no-index --find-links wheels --require-hashes -r "$req"
	"$BATS_TEST_TMPDIR/vpip/bin/pip" check
	"$BATS_TEST_TMPDIR/vpip/bin/pip" list --format freeze | grep -qx 'transformers==[0-9.]*'
	# uv: the lock file, offline, into another fresh venv
	if [ -x "$UVENV/bin/uv" ]; then
		"$UVENV/bin/uv" venv -q --no-config -p python3 "$BATS_TEST_TMPDIR/vuv"
		"$UVENV/bin/uv" pip install -q --no-config --offline --no-index --no-cache \
			--python "$BATS_TEST_TMPDIR/vuv/bin/python" -r "$lock"
		"$BATS_TEST_TMPDIR/vpip/bin/pip" --python "$BATS_TEST_TMPDIR/vuv/bin/python" check
		diff <("$BATS_TEST_TMPDIR/vpip/bin/pip" list --format freeze | grep -v '^pip==' | sort) \
			<("$BATS_TEST_TMPDIR/vpip/bin/pip" --python "$BATS_TEST_TMPDIR/vuv/bin/python" list --format freeze | grep -v '^pip==' | sort)
	else
		skip "uv is not in $UVENV (no network when the uv oracle ran?): the pylock install did not run"
	fi
}

@test "a lab's pyproject.toml (dependencies, a self-referencing extra with a marker, PEP 735 groups with include-group): uv's closure from the same file" {
	[ -x "$UVENV/bin/uv" ] || skip "uv is not in $UVENV (see the uv-on-the-fixture test): the pyproject oracle did not run"
	mkdir -p "$BATS_TEST_TMPDIR/lab"
	cat >"$BATS_TEST_TMPDIR/lab/pyproject.toml" <<'TOML'
[project]
name = "Lab_Models"
version = "1.0"
requires-python = ">=3.11"
dependencies = [
    "torch",
    "transformers>=4.40",  # the models
]

[project.optional-dependencies]
data = ["datasets"]
All = ["lab-models[data]", "accelerate ; python_version >= '3.12'"]

[dependency-groups]
train = ["accelerate", {include-group = "Base"}]
base = ["pyyaml"]

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
TOML
	local t py plat uvp args bad=()
	for t in cp311-manylinux_2_28_x86_64 cp312-win_amd64 cp313-macosx_14_0_arm64; do
		py=$(jq -r --arg t "$t" '.platforms[$t].python' "$SRV/www/a/EXPECTED.json")
		plat=$(jq -r --arg t "$t" '.platforms[$t].offwheel_platform' "$SRV/www/a/EXPECTED.json")
		uvp=$(jq -r --arg t "$t" '.platforms[$t].uv_python_platform' "$SRV/www/a/EXPECTED.json")
		for args in "" "--extra all" "--group train" "--all-extras --group train"; do
			# shellcheck disable=SC2086 # (uv reads --group from ./pyproject.toml)
			(cd "$BATS_TEST_TMPDIR/lab" && MACOSX_DEPLOYMENT_TARGET=14.0 "$UVENV/bin/uv" pip compile -q --no-config --cache-dir "$SRV/uv-cache" \
				--no-python-downloads --python-platform "$uvp" --python-version "$py" \
				--index-url "$OW_HTTP_URL/a/www/whl/cu130" --extra-index-url "$OW_HTTP_URL/a/www/simple" \
				--allow-insecure-host 127.0.0.1 --only-binary :all: --no-header --no-annotate \
				pyproject.toml $args) | sed 's/ *;.*//' | sort >"$BATS_TEST_TMPDIR/uv.txt"
			# shellcheck disable=SC2086
			ow_stack a --json resolve --offline --python "$py" --platform "$plat" \
				-r "$BATS_TEST_TMPDIR/lab/pyproject.toml" $args >"$BATS_TEST_TMPDIR/ow.json"
			[ -s "$BATS_TEST_TMPDIR/uv.txt" ] || { bad+=("$t '$args' (uv failed)"); continue; }
			diff -u --label "uv $t $args" --label offwheel "$BATS_TEST_TMPDIR/uv.txt" \
				<(jq -r '.targets[0].members[] | "\(.project)==\(.version)"' "$BATS_TEST_TMPDIR/ow.json" | sort) ||
				bad+=("$t '$args'")
		done
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "offwheel differs from uv on: ${bad[*]}"; false; }
	# the extra's marker holds: accelerate only where python_version >= 3.12
	ow_stack a --json resolve --offline --python 3.11,3.12 --platform linux-x86_64 \
		-r "$BATS_TEST_TMPDIR/lab/pyproject.toml" --extra ALL >"$BATS_TEST_TMPDIR/ow.json"
	[ "$(jq -r '[.targets[] | select(.members | any(.project == "accelerate")) | .target] | join(" ")' "$BATS_TEST_TMPDIR/ow.json")" = "cu130 cp312-manylinux_2_28_x86_64" ]
	jq -r '.targets[0].members[] | select(.project == "datasets") | .required_by' "$BATS_TEST_TMPDIR/ow.json" | grep -q 'pyproject.toml:11 (project.optional-dependencies.data)'
}
