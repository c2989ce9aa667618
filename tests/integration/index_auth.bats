#!/usr/bin/env bats
# A lab's index behind HTTP basic auth (docs/logins.md): a real nginx with
# auth_basic in front of the sample index's cu128 folder, whose pages link
# torchvision's wheels on a second host that asks for no login, and
# torchaudio's through a 302 from the login host to that second host.
# Logins from $NETRC, ~/.netrc and the index URL's userinfo (percent-encoded
# as pip takes it): sync stores pip's closure through the same login; the
# second host never sees an Authorization header (its access log); the
# password is in no file offwheel wrote and in no output; without a login,
# or with a wrong one, the command fails naming authentication.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

# the password holds '%' and '@', so the URL carries it percent-encoded
PASSWORD='Pa55%w@rd'
ENCODED='Pa55%25w%40rd'

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	printf 'lab:{PLAIN}%s\n' "$PASSWORD" >"$SRV/users"
	OW_NGINX_AUTH_FILE=$SRV/users ow_start_nginx "$SRV/www" "$SRV/www2"
	# the second host by its address: pip (Python) resolves no *.localhost
	export HOST2=https://127.0.0.1:$OW_HTTPS_PORT2
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$HOST2" >/dev/null
	# torchaudio's links go through the login host, which answers 302 to the second
	sed -i "s#$HOST2/#$OW_HTTPS_URL/to-r2/#g" "$SRV/www/whl/nightly/cu128/torchaudio/index.html"
	grep -q "/to-r2/whl/nightly/cu128/torchaudio-" "$SRV/www/whl/nightly/cu128/torchaudio/index.html"
	grep -q "$HOST2/whl/nightly/cu128/torchvision-" "$SRV/www/whl/nightly/cu128/torchvision/index.html"
	export OW_HTTPS_URL OW_HTTPS_PORT OW_HTTPS_PORT2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
	export HOSTPORT=${OW_HTTPS_URL#https://}
	export ROOT=$OW_HTTPS_URL/whl/nightly/cu128
	export LOGIN_ROOT="https://lab:$ENCODED@$HOSTPORT/whl/nightly/cu128"
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
	export PASSWORD ENCODED
	# the target is this machine's, so that pip, run here, is the oracle
	export HOSTPY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $HOSTPY in 3.11 | 3.12 | 3.13) ;; *) HOSTPY=3.12 ;; esac
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

setup() {
	# no netrc of the machine's user is read by accident
	export HOME=$BATS_TEST_TMPDIR/home
	mkdir -p "$HOME"
	unset NETRC
}

# sync the host-like target from INDEX into WS, options after
sync_from() {
	local ws=$1 index=$2
	shift 2
	"$OFFWHEEL" --home "$ws" "$@" sync --index-url "$index" --cert "$OW_CA_FILE" \
		--allow-host 127.0.0.1 --python "$HOSTPY" --platform linux-x86_64
}

closure() { jq -r '.resolve.targets[0].members[] | "\(.project)==\(.version)"' "$1" | sort; }

# the requests to the second host since line MARK of the access log carry no
# Authorization header, and there are some
second_host_saw_no_login() {
	local mark=$1 n
	n=$(tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep -c "^$OW_HTTPS_PORT2 ")
	[ "$n" -gt 0 ] || { echo "no request reached the second host"; return 1; }
	! tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep "^$OW_HTTPS_PORT2 " | grep -v 'auth=""'
}

# the password, raw or encoded, in no file under DIR... and not in FILE...
password_nowhere() {
	! grep -rlaF -e "$PASSWORD" -e "$ENCODED" -e "$(printf 'lab:%s' "$PASSWORD" | base64)" "$@"
}

@test "without a login: sync and crawl fail naming authentication, not the network" {
	run --separate-stderr sync_from "$BATS_TEST_TMPDIR/ws" "$ROOT"
	[ "$status" -eq 1 ] || { echo "$status $output $stderr"; false; }
	[[ "$stderr" == *"authentication required by $HOSTPORT (HTTP 401)"* ]]
	[[ "$stderr" == *"~/.netrc (machine localhost login USER password PASS)"* ]]
	[[ "$stderr" == *"(https://USER:PASS@$HOSTPORT/...)"* ]]
	[[ "$stderr$output" != *"check the network"* ]]
	run --separate-stderr sync_from "$BATS_TEST_TMPDIR/ws" "$ROOT" --json
	[ "$status" -eq 1 ]
	jq -e '.error.code == "EAUTH" and (.error.message | contains("authentication required"))' <<<"$output"
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" crawl --index-url "$ROOT" --cert "$OW_CA_FILE"
	[ "$status" -eq 1 ]
	[[ "$output" == *"authentication required by $HOSTPORT"* ]]
}

@test "a wrong password, from the URL or from the netrc: credentials refused, never retried" {
	: >"$OW_NGINX_LOG"
	run --separate-stderr sync_from "$BATS_TEST_TMPDIR/ws" "https://lab:wrong@$HOSTPORT/whl/nightly/cu128"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"credentials refused by $HOSTPORT (HTTP 401): the login the URL gives"* ]]
	[[ "$stderr$output" != *wrong* ]]
	# one request per page: a refusal is not retried
	[ "$(grep -c "^$OW_HTTPS_PORT \"GET /whl/nightly/cu128/torch/ " "$OW_NGINX_LOG")" -eq 1 ]
	printf 'machine localhost login lab password wrong\n' >"$BATS_TEST_TMPDIR/netrc"
	NETRC=$BATS_TEST_TMPDIR/netrc run --separate-stderr sync_from "$BATS_TEST_TMPDIR/ws" "$ROOT"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"credentials refused by $HOSTPORT (HTTP 401): the login \$NETRC ($BATS_TEST_TMPDIR/netrc) gives"* ]]
}

@test "userinfo in --index-url: sync stores pip's closure; the second host sees no login; the password is nowhere" {
	local ws=$BATS_TEST_TMPDIR/ws mark
	mark=$(wc -l <"$OW_NGINX_LOG")
	sync_from "$ws" "$LOGIN_ROOT" --json -v >"$BATS_TEST_TMPDIR/sync.json" 2>"$BATS_TEST_TMPDIR/sync.err" ||
		{ cat "$BATS_TEST_TMPDIR/sync.json" "$BATS_TEST_TMPDIR/sync.err"; false; }
	jq -e '.complete and .resolve.targets[0].complete' "$BATS_TEST_TMPDIR/sync.json"
	jq -e '[.fetch.files[] | select(.outcome == "done" or .outcome == "had")] | length > 10' \
		"$BATS_TEST_TMPDIR/sync.json"
	# the login host got the login (preemptively), the second host never did,
	# neither by a link nor by the 302 from the login host
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep -q "^$OW_HTTPS_PORT \"GET /whl/nightly/cu128/torch/ HTTP/1.1\" 200 .*auth=\"Basic "
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" |
		grep -q "^$OW_HTTPS_PORT \"GET /to-r2/whl/nightly/cu128/torchaudio-[^ ]* HTTP/1.1\" 302 .*auth=\"Basic "
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep -q "^$OW_HTTPS_PORT2 \"GET /whl/nightly/cu128/torchaudio-[^ ]* HTTP/1.1\" 200 "
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep -q "^$OW_HTTPS_PORT2 \"GET /whl/nightly/cu128/torchvision-"
	second_host_saw_no_login "$mark"
	# what is stored and shown names the root without its userinfo
	"$OFFWHEEL" --home "$ws" --json ls files >"$BATS_TEST_TMPDIR/ls.json"
	jq -e --arg r "$ROOT/" '[.files[] | select(.url | startswith($r))] | length > 0' "$BATS_TEST_TMPDIR/ls.json"
	! grep -q "lab:" "$BATS_TEST_TMPDIR/ls.json"
	target=$(jq -r '.resolve.targets[0].target' "$BATS_TEST_TMPDIR/sync.json")
	"$OFFWHEEL" --home "$ws" -q export "$BATS_TEST_TMPDIR/ex" --target "$target"
	"$OFFWHEEL" --home "$ws" -v ls sets >"$BATS_TEST_TMPDIR/sets.txt" 2>&1
	# the text of a sync again, said at length
	sync_from "$ws" "$LOGIN_ROOT" -v >"$BATS_TEST_TMPDIR/again.txt" 2>&1
	grep -q "$ROOT" "$BATS_TEST_TMPDIR/again.txt"
	password_nowhere "$ws" "$BATS_TEST_TMPDIR/ex" "$BATS_TEST_TMPDIR/sync.json" \
		"$BATS_TEST_TMPDIR/sync.err" "$BATS_TEST_TMPDIR/ls.json" "$BATS_TEST_TMPDIR/sets.txt" \
		"$BATS_TEST_TMPDIR/again.txt"
	# pip, given the same login in the same URL, takes the same closure
	[ "$(uname -m)" = x86_64 ] && python3 -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, sys.argv[1].split("."))))' "$HOSTPY" ||
		skip "pip's closure is taken for this machine's own target, and the sample index has none for it"
	jq -r '.resolve.targets[0].versions | to_entries[] | select(.value != null) | "\(.key)==\(.value)"' \
		"$BATS_TEST_TMPDIR/sync.json" >"$BATS_TEST_TMPDIR/req.in"
	# (requests prefers $REQUESTS_CA_BUNDLE to pip's --cert: the test CA must win)
	env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE -u PIP_CERT \
		timeout 300 python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--cert "$OW_CA_FILE" --report "$BATS_TEST_TMPDIR/pip.json" --index-url "$LOGIN_ROOT/" -r "$BATS_TEST_TMPDIR/req.in"
	python3 -c '
import json, re, sys
for i in json.load(open(sys.argv[1]))["install"]:
    print(re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() + "==" + i["metadata"]["version"])' \
		"$BATS_TEST_TMPDIR/pip.json" | sort >"$BATS_TEST_TMPDIR/pip.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/pip.txt")" -gt 10 ]
	diff -u --label pip --label offwheel "$BATS_TEST_TMPDIR/pip.txt" <(closure "$BATS_TEST_TMPDIR/sync.json")
}

@test "the login from \$NETRC and from ~/.netrc: the same set, the second host sees no login" {
	printf '# the lab index\nmachine localhost\n  login lab\n  password "%s"\n' "$PASSWORD" \
		>"$BATS_TEST_TMPDIR/netrc"
	local mark
	mark=$(wc -l <"$OW_NGINX_LOG")
	NETRC=$BATS_TEST_TMPDIR/netrc sync_from "$BATS_TEST_TMPDIR/ws1" "$ROOT" --json \
		>"$BATS_TEST_TMPDIR/a.json" 2>"$BATS_TEST_TMPDIR/a.err" ||
		{ cat "$BATS_TEST_TMPDIR/a.json" "$BATS_TEST_TMPDIR/a.err"; false; }
	jq -e '.complete' "$BATS_TEST_TMPDIR/a.json"
	second_host_saw_no_login "$mark"
	mark=$(wc -l <"$OW_NGINX_LOG")
	cp "$BATS_TEST_TMPDIR/netrc" "$HOME/.netrc"
	sync_from "$BATS_TEST_TMPDIR/ws2" "$ROOT" --json >"$BATS_TEST_TMPDIR/b.json" 2>"$BATS_TEST_TMPDIR/b.err" ||
		{ cat "$BATS_TEST_TMPDIR/b.json" "$BATS_TEST_TMPDIR/b.err"; false; }
	second_host_saw_no_login "$mark"
	diff <(closure "$BATS_TEST_TMPDIR/a.json") <(closure "$BATS_TEST_TMPDIR/b.json")
	[ "$(closure "$BATS_TEST_TMPDIR/a.json" | wc -l)" -gt 10 ]
	password_nowhere "$BATS_TEST_TMPDIR/ws1" "$BATS_TEST_TMPDIR/ws2" "$BATS_TEST_TMPDIR"/[ab].*
	# a netrc `default` goes to the index host named, never to the second host
	printf 'default login lab password "%s"\n' "$PASSWORD" >"$HOME/.netrc"
	mark=$(wc -l <"$OW_NGINX_LOG")
	sync_from "$BATS_TEST_TMPDIR/ws3" "$ROOT" -q
	second_host_saw_no_login "$mark"
}

@test "OFFWHEEL_PYTORCH_URL with a login: used, and named as the source of a bad URL" {
	OFFWHEEL_PYTORCH_URL="https://lab:$ENCODED@$HOSTPORT/whl" run --separate-stderr \
		"$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" crawl --cert "$OW_CA_FILE" --variant cu128 \
		--project torch
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[[ "$output" == *"$OW_HTTPS_URL/whl/nightly: 1 pages, "* ]]
	[[ "$output$stderr" != *"$ENCODED"* ]]
	OFFWHEEL_PYTORCH_URL="https://lab:$ENCODED@$HOSTPORT/whl?x=1" run --separate-stderr \
		"$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" crawl --cert "$OW_CA_FILE"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"OFFWHEEL_PYTORCH_URL: "* ]]
	[[ "$stderr" != *"--index-url:"* ]]
	[[ "$output$stderr" != *"$ENCODED"* && "$output$stderr" != *"$PASSWORD"* ]]
	# a usage error quoting the URL shows its userinfo as ***
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" crawl --cert "$OW_CA_FILE" \
		--index-url "https://lab:$ENCODED@$HOSTPORT/whl?x=1" --channel stable
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"https://***@$HOSTPORT/whl?x=1"* ]]
	[[ "$output$stderr" != *"$ENCODED"* ]]
}

@test "a --find-links URL with a login: the listing is read with it, the files on the second host without, and the password is nowhere" {
	local ws=$BATS_TEST_TMPDIR/ws mark
	mark=$(wc -l <"$OW_NGINX_LOG")
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --no-index \
		--find-links "https://lab:$ENCODED@$HOSTPORT/whl/nightly/cu128/torch/" --cert "$OW_CA_FILE" \
		--allow-host 127.0.0.1 --python "$HOSTPY" --platform linux-x86_64 --project torch --no-deps
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	jq -e '.targets[0].complete and (.targets[0].versions.torch | startswith("2."))' <<<"$output"
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" | grep -q "^$OW_HTTPS_PORT \"GET /whl/nightly/cu128/torch/ HTTP/1.1\" 200 .*auth=\"Basic "
	password_nowhere "$ws" <(echo "$output") <(echo "$stderr")
	# without the login the source is refused for authentication, not "missing"
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws2" resolve --no-index \
		--find-links "$ROOT/torch/" --cert "$OW_CA_FILE" --allow-host 127.0.0.1 \
		--python "$HOSTPY" --platform linux-x86_64 --project torch --no-deps
	[ "$status" -ne 0 ]
	[[ "$output $stderr" == *"authentication required by $HOSTPORT"* ]]
}
