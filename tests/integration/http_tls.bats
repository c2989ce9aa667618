#!/usr/bin/env bats
# The http engine against a real nginx over HTTPS with a test CA made at test
# time (tests/lib/servers.bash): verification, conditional GET (304 in the
# nginx log), Range resume with If-Range (206 in the log), restart on a stale
# validator, the second download host, and refusals.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export OWGET=${OWGET:-$OW_BUILD_DIR/tests/owget}
	[ -x "$OWGET" ] || skip "owget not built ($OWGET)"
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/a" "$SRV/b"
	head -c 3000000 /dev/urandom > "$SRV/a/big.bin"
	echo "second host" > "$SRV/b/r2.txt"
	ow_start_nginx "$SRV/a" "$SRV/b"
	export OW_HTTP_PORT OW_HTTPS_PORT OW_HTTPS_PORT2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR \
		OW_HTTPS_URL OW_HTTPS_URL2 OW_HTTP_URL OW_CERT_DIR
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

setup() {
	[ -x "$OWGET" ] || skip "owget not built"
	OUT=$BATS_TEST_TMPDIR/out
}

etag_of() { # json -> the ETag, unescaped
	sed -n 's/.*"etag":"\(.*\)","last_modified.*/\1/p' <<<"$1" | sed 's/\\"/"/g'
}

field() { # name json
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2"
}

@test "https GET verifies with the test CA and gets the exact bytes" {
	run "$OWGET" --cert "$OW_CA_FILE" "$OW_HTTPS_URL/big.bin" "$OUT"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	cmp "$OUT" "$SRV/a/big.bin"
	[ "$(field rc "$output")" = OK ]
	[ "$(field status "$output")" = 200 ]
	[ -n "$(field etag "$output")" ]
	grep -q "$OW_HTTPS_PORT \"GET /big.bin HTTP/1.1\" 200 .* ae=\"identity\"" "$OW_NGINX_LOG"
}

@test "SSL_CERT_FILE works like --cert" {
	SSL_CERT_FILE=$OW_CA_FILE run "$OWGET" "$OW_HTTPS_URL/big.bin" "$OUT"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "without the test CA: ETLS, exit 4, and a message that names --cert" {
	run env -u SSL_CERT_FILE "$OWGET" "$OW_HTTPS_URL/big.bin" "$OUT"
	[ "$status" -eq 4 ]
	[ "$(field rc "$output")" = ETLS ]
	[[ "$output" == *"--cert"* ]]
}

@test "conditional GET: the second request is a 304 (nginx log shows If-None-Match)" {
	run "$OWGET" --cert "$OW_CA_FILE" "$OW_HTTPS_URL/big.bin" "$OUT"
	etag=$(etag_of "$output")
	lm=$(sed -n 's/.*"last_modified":"\([^"]*\)".*/\1/p' <<<"$output")
	run "$OWGET" --cert "$OW_CA_FILE" --if-none-match "$etag" "$OW_HTTPS_URL/big.bin" "$OUT.2"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(field status "$output")" = 304 ]
	[ "$(field not_modified "$output")" = 1 ]
	grep -qF "\"GET /big.bin HTTP/1.1\" 304 0 range=\"\" if_range=\"\" inm=\"${etag//\"/\\\"}\"" "$OW_NGINX_LOG"
	run "$OWGET" --cert "$OW_CA_FILE" --if-modified-since "$lm" "$OW_HTTPS_URL/big.bin" "$OUT.3"
	[ "$(field status "$output")" = 304 ]
	grep -q "\" 304 .*ims=\"$lm\"" "$OW_NGINX_LOG"
}

@test "resume: Range + If-Range, a 206 from the right offset, the whole file in the end" {
	run "$OWGET" --cert "$OW_CA_FILE" "$OW_HTTPS_URL/big.bin" "$OUT"
	etag=$(etag_of "$output")
	head -c 1234567 "$SRV/a/big.bin" > "$OUT"
	run "$OWGET" --cert "$OW_CA_FILE" --resume "$etag" --expected 3000000 "$OW_HTTPS_URL/big.bin" "$OUT"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(field status "$output")" = 206 ]
	[ "$(field resumed "$output")" = 1 ]
	[ "$(field received "$output")" = $((3000000 - 1234567)) ]
	cmp "$OUT" "$SRV/a/big.bin"
	grep -qF "\" 206 1765433 range=\"bytes=1234567-\" if_range=\"${etag//\"/\\\"}\"" "$OW_NGINX_LOG"
}

@test "resume with a stale validator: nginx sends 200, the partial file is discarded" {
	head -c 1000 /dev/zero > "$OUT"
	run "$OWGET" --cert "$OW_CA_FILE" --resume '"stale-etag"' "$OW_HTTPS_URL/big.bin" "$OUT"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(field status "$output")" = 200 ]
	[ "$(field restarted "$output")" = 1 ]
	cmp "$OUT" "$SRV/a/big.bin"
}

@test "the second download host (r2.localhost, its own port) verifies too" {
	run "$OWGET" --cert "$OW_CA_FILE" "$OW_HTTPS_URL2/r2.txt" "$OUT"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(cat "$OUT")" = "second host" ]
	grep -q "^$OW_HTTPS_PORT2 \"GET /r2.txt" "$OW_NGINX_LOG"
}

@test "plain http is refused unless allowed (trusted host)" {
	run "$OWGET" "$OW_HTTP_URL/big.bin" "$OUT"
	[ "$status" -ne 0 ]
	[ "$(field rc "$output")" = EPOLICY ]
	run "$OWGET" --allow-http "$OW_HTTP_URL/big.bin" "$OUT"
	[ "$status" -eq 0 ]
	cmp "$OUT" "$SRV/a/big.bin"
}

@test "a missing file is ENOENT with the URL in the message" {
	run "$OWGET" --cert "$OW_CA_FILE" "$OW_HTTPS_URL/nope.whl" "$OUT"
	[ "$(field rc "$output")" = ENOENT ]
	[[ "$output" == *"/nope.whl: not found (HTTP 404)"* ]]
}

@test "parallel transfers over both hosts" {
	args=()
	for i in 1 2 3 4 5 6; do args+=("$OW_HTTPS_URL/big.bin" "$OUT.$i"); done
	args+=("$OW_HTTPS_URL2/r2.txt" "$OUT.r2")
	run "$OWGET" --cert "$OW_CA_FILE" --jobs 3 --per-host 2 "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	for i in 1 2 3 4 5 6; do cmp "$OUT.$i" "$SRV/a/big.bin"; done
	[ "$(grep -c '"rc":"OK"' <<<"$output")" -eq 7 ]
}
