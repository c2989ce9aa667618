#!/usr/bin/env bats
# export / check against a store that lies: tests/tools/fakes3.py serves a
# real signed export (the sample index's host cpu set, as export_attack.bats
# makes it) as s3://BUCKET/ex, and the bucket's name picks the lie — a
# listing over the size cap, one that stalls, continuation tokens without
# end, an object GET that stalls, a 300 MB SHA256SUMS, an <Error> that
# echoes the credentials.  Each must end in an error that names the prefix
# and the real cause, never in a verdict, and no password, secret key,
# session token or access key id may reach the terminal.  Everything runs
# under `timeout`, so a hang fails instead of blocking.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export WS=$SRV/ws KEYS=$SRV/keys
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --project torch,torchvision,torchaudio
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.11 >"$SRV/resolve.json"
	export TARGET=$(jq -r '.targets[0].target' "$SRV/resolve.json")
	mapfile -t files < <(jq -r '.targets[0].members[].filename' "$SRV/resolve.json")
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	"$OFFWHEEL" --home "$WS" -q fetch --metadata "${net[@]}" "${files[@]}"
	ow_stop_nginx
	mkdir -p "$KEYS" "$SRV/store"
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
	"$OFFWHEEL" --home "$WS" -q export "$SRV/store/ex" --target "$TARGET" --sign "$KEYS/k.sec"
	export FAKES3_SECRET=fakeSecretKey0123456789
	python3 "$OW_SOURCE_DIR/tests/tools/fakes3.py" --root "$SRV/store" >"$SRV/port" &
	echo $! >"$SRV/fakes3.pid"
	local i
	for i in $(seq 100); do
		[ -s "$SRV/port" ] && break
		sleep 0.05
	done
	export F=http://127.0.0.1:$(head -n1 "$SRV/port")
}

teardown_file() {
	[ -f "$SRV/fakes3.pid" ] && kill "$(cat "$SRV/fakes3.pid")" 2>/dev/null
	rm -rf "$SRV"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_PROFILE
	export AWS_SHARED_CREDENTIALS_FILE=$BATS_TEST_TMPDIR/no-credentials
	export AWS_ACCESS_KEY_ID=AKIAFAKEKEYID0001 AWS_SECRET_ACCESS_KEY=$FAKES3_SECRET
	export AWS_SESSION_TOKEN=fakeSessionToken0123456789
}

check() {
	timeout 100 "$OFFWHEEL" check "$@" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json"
}

# no credential of this test, and no password of a URL, in what was printed
no_secrets() {
	local s
	for s in Pw0rdXyZ9 "$AWS_SECRET_ACCESS_KEY" "$AWS_SESSION_TOKEN" "$AWS_ACCESS_KEY_ID"; do
		if [[ "$output" == *"$s"* ]]; then
			echo "printed: $s"
			return 1
		fi
	done
}

@test "harness: the honest bucket of the lying store checks valid, over s3:// and http://" {
	run -0 check s3://honest/ex --endpoint "$F"
	[[ "$output" == *"valid"* ]]
	run -0 check "$F/honest/ex"
}

@test "check s3://: a listing page over the size cap is an error (exit 4) naming the prefix and the cause, never valid" {
	run -4 --separate-stderr check s3://listbig/ex --endpoint "$F"
	echo "$stderr"
	[ -z "$output" ]
	[[ "$stderr" == *"s3://listbig/ex/"* ]]
	[[ "$stderr" == *"over the 16777216-byte cap"* ]]
	[[ "$stderr" == *"could not run"* ]]
	run -4 --separate-stderr check s3://listbig/ex --endpoint "$F" --json
	[[ "$output" != *'"valid": true'* ]]
	[[ "$stderr" == *"s3://listbig/ex/"* ]]
}

@test "check s3://: a listing that stalls is an error (exit 4) naming the prefix and the stall, never valid" {
	run -4 --separate-stderr check s3://liststall/ex --endpoint "$F"
	echo "$stderr"
	[ -z "$output" ]
	[[ "$stderr" == *"s3://liststall/ex/"* ]]
	[[ "$stderr" == *"stalled after"*"no data for 30 s"* ]]
}

@test "endless continuation tokens: export and check stop within a few pages and say why, naming the prefix" {
	curl -fsS "$F/stats" >before.json
	run -1 timeout 60 "$OFFWHEEL" --home "$WS" export s3://endless/ex --endpoint "$F" \
		--target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[[ "$output" == *"s3://endless/ex/ stopped after"*"pages"*"continuation tokens"* ]]
	run -4 check s3://endless/ex --endpoint "$F"
	echo "$output"
	[[ "$output" == *"s3://endless/ex/ stopped after"* ]]
	curl -fsS "$F/stats" >after.json
	[ $(($(jq .requests after.json) - $(jq .requests before.json))) -lt 60 ]
	run -4 check s3://sametoken/ex --endpoint "$F"
	[[ "$output" == *"s3://sametoken/ex/ stopped: the store sent the same continuation token twice"* ]]
}

@test "an object GET that stalls, and a 300 MB SHA256SUMS, are reported by their cause, not 'HTTP 200'" {
	run -4 check s3://getstall/ex --endpoint "$F"
	echo "$output"
	[[ "$output" == *"s3://getstall/ex/SHA256SUMS.sig"*"stalled after"*"bytes"*"no data for 30 s"* ]]
	[[ "$output" != *"failed: HTTP 200"* ]]
	run -3 check s3://bigsums/ex --endpoint "$F"
	echo "$output"
	[[ "$output" == *"SHA256SUMS"*"over the 67108864-byte cap"* ]]
	[[ "$output" != *"failed: HTTP 200"* ]]
	run -3 check "$F/bigsums/ex"
	[[ "$output" == *"over the 67108864-byte cap"* ]]
	[[ "$output" != *"failed: HTTP 200"* ]]
}

@test "passwords and credentials are never printed: --endpoint, check http(s)://, AWS_ENDPOINT_URL userinfo; a store's <Error> echoing them" {
	local ep=${F/http:\/\//http://alice:Pw0rdXyZ9@}
	# a store that answers 403 with our own credentials in its message
	run -1 check s3://echo/ex --endpoint "$ep"
	echo "$output"
	[[ "$output" == *"AccessDenied: Access denied for key ***"* ]]
	[[ "$output" == *"http://***@127.0.0.1:"* || "$output" == *"s3://echo/ex/"* ]]
	no_secrets
	run -1 timeout 60 "$OFFWHEEL" --home "$WS" export s3://echo/ex --endpoint "$ep" \
		--target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[[ "$output" == *"AccessDenied"* ]]
	no_secrets
	# an endpoint nobody answers, given three ways
	run -1 check s3://honest/ex --endpoint "http://alice:Pw0rdXyZ9@127.0.0.1:1"
	echo "$output"
	[[ "$output" == *"http://***@127.0.0.1:1/"* ]]
	no_secrets
	AWS_ENDPOINT_URL="http://alice:Pw0rdXyZ9@127.0.0.1:1" run -1 check s3://honest/ex
	[[ "$output" == *"http://***@127.0.0.1:1/"* ]]
	no_secrets
	run -1 check "http://alice:Pw0rdXyZ9@127.0.0.1:1/honest/ex"
	echo "$output"
	[[ "$output" == *"http://***@127.0.0.1:1/honest/ex/"* ]]
	no_secrets
	# a web server that has no export there: a verdict, the URL redacted
	run -3 check "${ep}/honest/nothing"
	echo "$output"
	[[ "$output" == *"http://***@127.0.0.1:"*"/honest/nothing: NOT valid"* ]]
	no_secrets
	run -2 check s3://honest/ex --endpoint "ftp://alice:Pw0rdXyZ9@127.0.0.1:1"
	no_secrets
}
