#!/usr/bin/env bats
# offwheel crawl against the sample index (tests/tools/make-fixture-index) served
# by a real nginx over HTTPS with a CA made at test time, a second download
# host, conditional GETs seen in nginx's log, hostile pages and a misbehaving
# server (tests/tools/faultserver.py).

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

PROJECTS=torch,torchvision,torchaudio,filelock,sympy,nvidia-cudnn-cu12

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	ow_start_faultserver "$SRV/www"
	export OW_HTTP_PORT OW_HTTPS_PORT OW_HTTPS_PORT2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR \
		OW_HTTPS_URL OW_HTTPS_URL2 OW_HTTP_URL OW_CERT_DIR OW_FAULT_URL OW_FAULT_PID
	export WS=$SRV/ws
}

teardown_file() {
	ow_stop_faultserver
	ow_stop_nginx
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

crawl_nightly() {
	ow --json crawl --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cpu,cu126,cu128 --project "$PROJECTS" "$@"
}

# number of anchors on the generated pages for those variants and projects
anchors_on_pages() {
	local n=0 v p
	for v in cpu cu126 cu128; do
		for p in ${PROJECTS//,/ }; do
			f=$SRV/www/whl/nightly/$v/$p/index.html
			[ -f "$f" ] && n=$((n + $(grep -o '<a ' "$f" | wc -l)))
		done
	done
	echo $n
}

@test "crawl over HTTPS with the test CA records every file of every page" {
	run crawl_nightly
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r '[.pages[].outcome] | unique | join(",")' <<<"$output")" = "missing,new" ]
	# only the CUDA library project is missing, and only from the cpu folder
	[ "$(jq -r '[.pages[] | select(.outcome == "missing") | .variant + "/" + .project] | join(",")' <<<"$output")" = cpu/nvidia-cudnn-cu12 ]
	[ "$(jq .rejected <<<"$output")" -eq 0 ]
	want=$(anchors_on_pages)
	[ "$want" -gt 100 ]
	# a root file may be listed on several variant pages: count links, not rows
	[ "$(jq '[.pages[].files] | add' <<<"$output")" -eq "$want" ]
	run ow --json ls files --project torch --variant cu128
	[ "$(jq .count <<<"$output")" -gt 0 ]
	# hashes: nightly files publish none, metadata hashes are there
	[ "$(jq '[.files[] | select(.sha256 != null)] | length' <<<"$output")" -eq 0 ]
	[ "$(jq '[.files[] | select(.meta_sha256 != null)] | length' <<<"$output")" -gt 0 ]
	# links to the second download host were resolved and kept
	run ow --json ls files
	[ "$(jq '[.files[] | select(.url | startswith(env.OW_HTTPS_URL2))] | length' <<<"$output")" -gt 0 ]
	# '+' is decoded once: a local label in the version
	[ "$(jq -r '[.files[] | select(.project=="torch" and .variant=="cu128")][0].version' <<<"$output")" = \
		"$(jq -r '[.files[] | select(.project=="torch" and .variant=="cu128")][0].version' <<<"$output" | grep '+cu128')" ]
	run ow fsck
	[ "$status" -eq 0 ]
}

@test "a second crawl sends conditional requests and nginx answers 304" {
	before=$(ow_nginx_log_count '" 304 ')
	run crawl_nightly
	[ "$status" -eq 0 ]
	[ "$(jq -r '[.pages[] | select(.outcome != "missing") | .outcome] | unique | join(",")' <<<"$output")" = unchanged ]
	after=$(ow_nginx_log_count '" 304 ')
	pages=$(jq '[.pages[] | select(.outcome == "unchanged")] | length' <<<"$output")
	[ $((after - before)) -eq "$pages" ]
	# the requests carried If-None-Match
	grep -q 'inm="\\"' "$OW_NGINX_LOG" || grep -q 'inm="W/' "$OW_NGINX_LOG" || grep -Eq 'inm="[^-]' "$OW_NGINX_LOG"
}

@test "a page that changed is re-read: removed files are kept and marked gone" {
	page=$SRV/www/whl/nightly/cu128/torchvision/index.html
	gone_file=$(grep -o '>torchvision-[^<]*whl<' "$page" | head -1 | tr -d '<>')
	grep -v ">$gone_file<" "$page" > "$page.new" && mv "$page.new" "$page"
	touch -d '+2 seconds' "$page" # a new Last-Modified / ETag for nginx
	run crawl_nightly
	[ "$status" -eq 0 ]
	[ "$(jq -r '.pages[] | select(.variant=="cu128" and .project=="torchvision") | .outcome' <<<"$output")" = changed ]
	[ "$(jq -r '.pages[] | select(.variant=="cu128" and .project=="torchvision") | .gone' <<<"$output")" -eq 1 ]
	[ "$(jq '[.pages[] | select(.outcome == "changed")] | length' <<<"$output")" -eq 1 ]
	run ow --json ls files --project torchvision --variant cu128
	[ "$(jq -r --arg f "$gone_file" '.files[] | select(.filename==$f) | .gone_at != null' <<<"$output")" = true ]
}

@test "a project the index does not have is 'missing', not an error" {
	run ow --json crawl --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --variant cu128 --project no-such-thing
	[ "$status" -eq 0 ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = missing ]
	[[ "$(jq -r '.pages[0].error' <<<"$output")" == *"no such project"* ]]
}

@test "TLS is verified: an unknown CA fails with a clear error and stores nothing" {
	run "$OFFWHEEL" --home "$SRV/ws-tls" --json crawl --index-url "$OW_HTTPS_URL/whl/nightly" --variant cu128 --project torch
	[ "$status" -eq 4 ]
	[[ "$(jq -r '.pages[0].error' <<<"$output")" == *ertificate* ]]
	[ "$("$OFFWHEEL" --home "$SRV/ws-tls" --json ls files | jq .count)" -eq 0 ]
}

@test "plain http needs --trusted-host, as with pip" {
	run "$OFFWHEEL" --home "$SRV/ws-http" crawl --index-url "$OW_HTTP_URL/whl/nightly" --variant cu128 --project torch
	[ "$status" -eq 2 ]
	[[ "$output" == *"--trusted-host"* ]]
	# the page's own links point to https hosts; allow them too
	run "$OFFWHEEL" --home "$SRV/ws-http" --json crawl --index-url "$OW_HTTP_URL/whl/nightly" \
		--trusted-host 127.0.0.1 --allow-host localhost --allow-host r2.localhost --variant cu128 --project torch
	[ "$status" -eq 0 ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = new ]
}

@test "resolve --offline reads the pages of a plain-http index without --trusted-host" {
	ws=$SRV/ws-http-offline
	args=(--index-url "$OW_HTTP_URL/whl/nightly" --variant cu128 --project torch
		--python 3.12 --platform linux-x86_64)
	run "$OFFWHEEL" --home "$ws" --json resolve "${args[@]}" --trusted-host 127.0.0.1 --cert "$OW_CA_FILE" \
		--allow-host localhost --allow-host r2.localhost
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	online=$(jq -c '[.targets[].members[] | .filename] | sort' <<<"$output")
	[ "$(jq length <<<"$online")" -gt 1 ]
	# the network needs the flag ...
	run "$OFFWHEEL" --home "$ws" resolve "${args[@]}"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--trusted-host"* ]]
	# ... reading the workspace does not, and gives the same closure
	run "$OFFWHEEL" --home "$ws" --json resolve --offline "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -c '[.targets[].members[] | .filename] | sort' <<<"$output")" = "$online" ]
}

@test "libcurl is loaded only by the commands that go to the network" {
	ws=$SRV/ws-nocurl
	run "$OFFWHEEL" --home "$ws" --json crawl --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --variant cu128 --project torchvision
	[ "$status" -eq 0 ]
	# without a loadable libcurl: the network command says what is missing and what to do ...
	export OFFWHEEL_LIBCURL=$SRV/no-such-libcurl.so
	run --separate-stderr "$OFFWHEEL" --home "$ws" crawl --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --variant cu128 --project torchvision
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"cannot load $OFFWHEEL_LIBCURL"* ]]
	[[ "$stderr" == *"apt-get install libcurl4"* ]]
	# ... keeps what the index had ...
	run "$OFFWHEEL" --home "$ws" --json ls files
	[ "$status" -eq 0 ]
	[ "$(jq .count <<<"$output")" -gt 0 ]
	# ... and the offline commands never need it
	run "$OFFWHEEL" --home "$ws" fsck
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" audit "$OW_SOURCE_DIR/kernels/smoke.fatbin"
	[ "$status" -eq 0 ]
	unset OFFWHEEL_LIBCURL
}

# --- hostile pages: bad links are rejected, good links of the page kept -----

make_hostile_page() { # dir
	local d=$SRV/www/whl/hostile/cpu/torch good
	mkdir -p "$d"
	good=$(grep -o '<a href="[^"]*">torch-[^<]*</a>' "$SRV/www/whl/nightly/cpu/torch/index.html" | head -2)
	cat > "$d/index.html" <<HTML
<!DOCTYPE html>
<html><body><h1>Links for torch</h1>
$good
<a href="javascript:alert(1)">torch-2.0.0-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="data:text/plain,x">torch-2.0.1-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="file:///etc/passwd">torch-2.0.2-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="ftp://localhost/torch-2.0.3-cp312-cp312-linux_x86_64.whl">torch-2.0.3-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="https://evil.example/whl/torch-2.0.4-cp312-cp312-linux_x86_64.whl">torch-2.0.4-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="//evil.example/torch-2.0.5-cp312-cp312-linux_x86_64.whl">torch-2.0.5-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="https://user@localhost:$OW_HTTPS_PORT/torch-2.0.6-cp312-cp312-linux_x86_64.whl">torch-2.0.6-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="http://localhost:$OW_HTTP_PORT/torch-2.0.7-cp312-cp312-linux_x86_64.whl">torch-2.0.7-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl\\torch-2.0.8-cp312-cp312-linux_x86_64.whl">torch-2.0.8-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/%2e%2e%2f%2e%2e%2fetc/torch-2.0.9-cp312-cp312-linux_x86_64.whl">torch-2.0.9-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="../../../../whl/torch-2.2.0-cp312-cp312-linux_x86_64.whl">torch-2.2.0-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.0%252Bcpu-cp312-cp312-linux_x86_64.whl">torch-2.1.0%2Bcpu-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.1%00-cp312-cp312-linux_x86_64.whl">torch-2.1.1-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.2-cp312-cp312-linux_x86_64.whl%0d%0aX: y">torch-2.1.2-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.3-cp312-cp312-linux_x86_64.whl">torch-9.9.9-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/README.txt">README.txt</a><br/>
<a href="/whl/torch-2.1.4-cp312-cp312-linux_x86_64.whl#sha256=abc">torch-2.1.4-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.5-cp312-cp312-linux_x86_64.whl#sha256=zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad">torch-2.1.5-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.6-cp312-cp312-linux_x86_64.whl#sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad#sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad">torch-2.1.6-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.7-cp312-cp312-linux_x86_64.whl#sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad">torch-2.1.7-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torch-2.1.7-cp312-cp312-linux_x86_64.whl#sha256=cb7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad">torch-2.1.7-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="/whl/torchvision-0.1.0-cp312-cp312-linux_x86_64.whl">torchvision-0.1.0-cp312-cp312-linux_x86_64.whl</a><br/>
</body></html>
<!--TIMESTAMP 1697195006-->
HTML
}

@test "one hostile link of each kind is rejected with a reason; the good links are kept" {
	make_hostile_page
	run ow --json crawl --index-url "$OW_HTTPS_URL/whl/hostile" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cpu --project torch
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	page=$(jq '.pages[0]' <<<"$output")
	echo "$page" | jq -r '.rejected_reasons[]'
	# a literal ../ is resolved against the page, as pip does, and kept: it
	# lands on the index's own host; the encoded %2e%2e%2f stays refused
	[ "$(jq .files <<<"$page")" -eq 3 ]
	[ "$(jq .rejected <<<"$page")" -eq 21 ]
	reasons=$(jq -r '.rejected_reasons | join("\n")' <<<"$page")
	for phrase in javascript data: file ftp evil.example userinfo http backslash '\.\.' \
		'%25' '%00' conflict 'not a wheel' 'another project'; do
		grep -qi -- "$phrase" <<<"$reasons" || { echo "no reason mentions '$phrase'"; false; }
	done
	run ow --json ls files --project torch
	[ "$(jq '[.files[] | select(.version | startswith("2.0.") or startswith("2.1."))] | length' <<<"$output")" -eq 0 ]
	jq -e --arg u "$OW_HTTPS_URL/whl/torch-2.2.0-cp312-cp312-linux_x86_64.whl" '[.files[] | select(.url == $u)] | length == 1' <<<"$output"
}

@test "a captive portal, a JSON error or an empty page is refused and nothing of it is stored" {
	for kind in portal json empty; do
		d=$SRV/www/whl/bad-$kind/cpu/torch
		mkdir -p "$d"
		case $kind in
		portal) echo '<html><body><form action="/login"><input name=u></form>Please sign in</body></html>' ;;
		json) echo '{"message": "Not Found", "code": 404}' ;; # JSON, not a PEP 691 page
		empty) : ;;
		esac >"$d/index.html"
		pages_before=$(ow --json ls objects --kind page | jq .count)
		run ow --json crawl --index-url "$OW_HTTPS_URL/whl/bad-$kind" --cert "$OW_CA_FILE" --variant cpu --project torch
		[ "$status" -eq 4 ]
		[ "$(jq -r '.pages[0].outcome' <<<"$output")" = failed ]
		echo "$kind: $(jq -r '.pages[0].error' <<<"$output")"
		[ "$(ow --json ls objects --kind page | jq .count)" -eq "$pages_before" ]
	done
}

# --- transport faults, served by the fault server (plain http, trusted) ---------

# The page's links point at the https hosts, which are not allowed here: the
# page itself is what is under test.  127.0.0.1 is the only allowed host, so a
# redirect to localhost is a redirect to another host.
fault_crawl() { # mode
	ow --json --lock-timeout 5 crawl --index-url "$OW_FAULT_URL/fault/$1/whl/nightly" \
		--trusted-host 127.0.0.1 --variant cu128 --project torchaudio
}

@test "transient faults (503, 429, truncation, reset) recover within the retry budget" {
	for mode in "503,fail=1,ra=0" "429,fail=1,ra=0" "truncate,fail=1" "reset,fail=1"; do
		run fault_crawl "$mode"
		[ "$status" -eq 0 ] || { echo "$mode: $output"; false; }
		[[ "$(jq -r '.pages[0].outcome' <<<"$output")" =~ ^(new|same|changed)$ ]]
	done
}

@test "persistent faults end with a clear error, exit 4, and store nothing new" {
	files_before=$(ow --json ls files --project torchaudio | jq .count)
	for mode in 503 500 429,ra=3600 redirect-project,p=torch redirect-file redirect-other-host redirect-loop gzip cl-garbage cl-double header-flood; do
		run fault_crawl "$mode"
		[ "$status" -eq 4 ] || { echo "$mode: exit $status: $output"; false; }
		err=$(jq -r '.pages[0].error' <<<"$output")
		echo "$mode: $err"
		[ -n "$err" ] && [ "$err" != null ]
	done
	[ "$(ow --json ls files --project torchaudio | jq .count)" -eq "$files_before" ]
	run ow fsck
	[ "$status" -eq 0 ]
}

@test "pages are asked for as PEP 691 JSON first, HTML accepted; a JSON page (real PyPI filelock) is read like its HTML" {
	mkdir -p "$SRV/www/whl/pep691/cpu/filelock" "$SRV/www/whl/pep503/cpu/filelock"
	cp "$OW_SOURCE_DIR/tests/fixtures/pypi-simple/filelock.json" "$SRV/www/whl/pep691/cpu/filelock/index.html"
	cp "$OW_SOURCE_DIR/tests/fixtures/pypi-simple/filelock.html" "$SRV/www/whl/pep503/cpu/filelock/index.html"
	: >"$OW_NGINX_LOG"
	for form in pep691 pep503; do
		run ow --json crawl --index-url "$OW_HTTPS_URL/whl/$form" --cert "$OW_CA_FILE" --variant cpu \
			--project filelock
		[ "$status" -eq 0 ] || { echo "$output"; false; }
		n=$(jq '.pages[0].files' <<<"$output")
		sd=$(jq '.pages[0].sdists' <<<"$output")
		echo "$form: $n files, $sd sdists"
		eval "n_$form=$n sd_$form=$sd"
	done
	# all 271 files: 124 wheels and 147 sdists, as PyPI's own JSON counts them
	read -r all wheels sdists < <(python3 -c '
import json, sys
fs = [f["filename"] for f in json.load(open(sys.argv[1]))["files"]]
print(len(fs), sum(f.endswith(".whl") for f in fs), sum(f.endswith((".tar.gz", ".zip")) for f in fs))
' "$OW_SOURCE_DIR/tests/fixtures/pypi-simple/filelock.json")
	[ "$all" -eq 271 ] && [ "$wheels" -eq 124 ]
	[ "$n_pep691" -eq "$all" ]
	[ "$sd_pep691" -eq "$sdists" ]
	[ "$n_pep691" -eq "$n_pep503" ] && [ "$sd_pep691" -eq "$sd_pep503" ]
	# every page request carried the Accept header, JSON first
	grep -F '/whl/pep691/cpu/filelock/' "$OW_NGINX_LOG" | grep -qF 'accept="application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"' ||
		{ cat "$OW_NGINX_LOG"; false; }
}
