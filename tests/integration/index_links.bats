#!/usr/bin/env bats
# The link rule on index layouts whose pages link upwards: a bandersnatch
# mirror (simple/<p>/index.html -> ../../packages/xx/yy/<hash>/<file>) served
# by real nginx, and the same tree as a file:// index, where links that leave
# the index root (file:///etc/..., an absolute path elsewhere, ../../../
# climbing out) are refused with a message naming the href, unless
# --allow-file-outside-root.  The wheels are the sample index's cpu folder
# (tests/tools/make-fixture-index).  docs/index-quirks.md has the rule.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

# a bandersnatch-layout mirror of the sample index's cpu pages in OUT:
# OUT/simple/<p>/index.html, OUT/packages/<h[0:2]>/<h[2:4]>/<h[4:]>/<file>
bandersnatch_tree() { # WWW OUT
	python3 - "$1" "$2" <<'EOF'
import glob, hashlib, html, os, re, shutil, sys, urllib.parse
www, out = sys.argv[1:3]
names = []
for page in sorted(glob.glob(f"{www}/whl/cpu/*/index.html")):
    proj = page.split("/")[-2]
    rows = []
    for href in re.findall(r'href="([^"]*)"', open(page).read()):
        src = www + urllib.parse.unquote(urllib.parse.urlsplit(href).path)
        if not src.endswith(".whl"):
            continue
        fn = os.path.basename(src)
        data = open(src, "rb").read()
        sha = hashlib.sha256(data).hexdigest()
        h = hashlib.blake2b(data, digest_size=32).hexdigest()
        d = f"{out}/packages/{h[:2]}/{h[2:4]}/{h[4:]}"
        os.makedirs(d, exist_ok=True)
        shutil.copy(src, f"{d}/{fn}")
        url = f"../../packages/{h[:2]}/{h[2:4]}/{h[4:]}/{urllib.parse.quote(fn)}#sha256={sha}"
        rows.append(f'    <a href="{html.escape(url)}">{html.escape(fn)}</a><br/>')
    os.makedirs(f"{out}/simple/{proj}", exist_ok=True)
    with open(f"{out}/simple/{proj}/index.html", "w") as f:
        f.write("<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" "
                f"content=\"1.0\">\n    <title>Links for {proj}</title>\n  </head>\n  <body>\n"
                f"    <h1>Links for {proj}</h1>\n" + "\n".join(rows) + "\n  </body>\n</html>\n")
    names.append(proj)
with open(f"{out}/simple/index.html", "w") as f:
    f.write("<!DOCTYPE html>\n<html><body>\n" +
            "".join(f'<a href="{p}/">{p}</a><br/>\n' for p in names) + "</body></html>\n")
EOF
}

setup_file() {
	export SRV=$(mktemp -d)
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV/fx" >/dev/null
	mkdir -p "$SRV/www"
	bandersnatch_tree "$SRV/fx/www" "$SRV/www/pypi"
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_NGINX_DIR OW_NGINX_LOG
	export HOSTPY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	# the same mirror on disk, and wheels lying outside it
	cp -a "$SRV/www/pypi" "$SRV/local"
	mkdir -p "$SRV/outside"
	cp "$SRV/local/packages"/*/*/*/filelock-3.19.1-py3-none-any.whl \
		"$SRV/outside/filelock-3.0.1-py3-none-any.whl"
	cp "$SRV/outside/filelock-3.0.1-py3-none-any.whl" "$SRV/outside/filelock-3.0.2-py3-none-any.whl"
	cp "$SRV/outside/filelock-3.0.1-py3-none-any.whl" "$SRV/outside/filelock-3.0.3-py3-none-any.whl"
	ln -s "$SRV/local" "$SRV/link"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" "$@"; }

# the wheels a served page links, counted from the page itself
page_wheels() { grep -c '\.whl</a>' "$1"; }

@test "a bandersnatch mirror over nginx: crawl lists every ../../packages/ link, resolve and sync work" {
	local root=$OW_HTTP_URL/pypi/simple t=(--trusted-host "127.0.0.1:$OW_HTTP_PORT")
	run ow --json crawl --index-url "$root" "${t[@]}" --variant all --project torch,filelock,sympy
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	echo "$output" | jq -c '.pages[] | {url, files, rejected, first: .rejected_reasons[0]}'
	[ "$(jq '[.pages[].rejected] | add' <<<"$output")" -eq 0 ]
	for p in torch filelock sympy; do
		[ "$(jq --arg p "$p" '.pages[] | select(.url | endswith("/" + $p + "/")) | .files' <<<"$output")" -eq \
			"$(page_wheels "$SRV/www/pypi/simple/$p/index.html")" ]
	done
	run ow --json sync --index-url "$root" "${t[@]}" --python "$HOSTPY" --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.complete and .resolve.links_rejected == 0 and (.resolve.targets[0].members | length) > 5' <<<"$output"
	grep -q '"GET /pypi/packages/[0-9a-f]*/[0-9a-f]*/[0-9a-f]*/torch-' "$OW_NGINX_LOG"
	ow --json ls files --project filelock |
		jq -e --arg p "$OW_HTTP_URL/pypi/packages/" '[.files[] | select(.url | startswith($p))] | length == 2'
}

@test "sync and resolve say how many links were rejected and why, not only 'no torch wheel fits'" {
	# one page whose links all leave the allowed hosts
	mkdir -p "$SRV/www/bad/simple/torch"
	sed 's|href="\.\./\.\./packages/|href="https://evil.example/packages/|' \
		"$SRV/www/pypi/simple/torch/index.html" >"$SRV/www/bad/simple/torch/index.html"
	local n
	n=$(page_wheels "$SRV/www/bad/simple/torch/index.html")
	run ow --json resolve --index-url "$OW_HTTP_URL/bad/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python "$HOSTPY" --platform linux-x86_64 --project torch
	echo "$output" | jq -c '{links_rejected, links_rejected_first}'
	[ "$(jq .links_rejected <<<"$output")" -eq "$n" ]
	jq -e '.links_rejected_first | length == 3' <<<"$output"
	jq -e '.links_rejected_first[0] | contains("/bad/simple/torch/: href \"https://evil.example/packages/") and contains("not an allowed download host")' <<<"$output"
	run ow sync --index-url "$OW_HTTP_URL/bad/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" --force \
		--python "$HOSTPY" --platform linux-x86_64 --project torch
	echo "$output"
	[[ $output == *"$n link(s) on the index pages crawled were rejected"* ]]
	[[ $output == *"rejected: $OW_HTTP_URL/bad/simple/torch/: href \"https://evil.example/"* ]]
	[[ $output == *"... $((n - 3)) more"* ]]
	# unchanged (304) but stored with rejected links: read again from the
	# store under today's rule, here one that allows the host
	local before
	before=$(ow_nginx_log_count '"GET /bad/simple/torch/ HTTP/1.1" 304 ')
	run ow --json crawl --index-url "$OW_HTTP_URL/bad/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--allow-host evil.example --variant all --project torch
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(ow_nginx_log_count '"GET /bad/simple/torch/ HTTP/1.1" 304 ')" -eq $((before + 1)) ]
	jq -e --argjson n "$n" '.pages[0] | .files == $n and .rejected == 0 and .outcome == "same"' <<<"$output"
}

@test "legacy sdist names (sympy-0.7.2-py3.2.tar.gz) are skipped as pip skips them: counted, named with -v, never printed as rejected" {
	mkdir -p "$SRV/www/legacy/simple"
	cp -a "$SRV/www/pypi/simple/." "$SRV/www/legacy/simple/"
	ln -sfn "$SRV/www/pypi/packages" "$SRV/www/legacy/packages"
	# the shape of PyPI's own sympy page: an sdist per Python, named the old way
	sed -i 's|</body>|<a href="../../packages/torch-0.1.2-py3.2.tar.gz">torch-0.1.2-py3.2.tar.gz</a><br/>\n<a href="../../packages/Torch-0.1.2-py2.7.zip">Torch-0.1.2-py2.7.zip</a><br/>\n</body>|' \
		"$SRV/www/legacy/simple/torch/index.html"
	run ow sync --index-url "$OW_HTTP_URL/legacy/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python "$HOSTPY" --platform linux-x86_64 --project torch --no-deps
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"rejected"* ]]
	[[ $output != *"py3.2"* ]]
	run ow --json crawl --index-url "$OW_HTTP_URL/legacy/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--force --project torch
	jq -e '.pages[0] | .rejected == 0 and .skipped == 2' <<<"$output"
	run ow crawl -v --index-url "$OW_HTTP_URL/legacy/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--force --project torch
	[[ $output == *"2 skipped (.egg/.exe/old sdist formats)"* ]]
	[[ $output == *"skipped: torch-0.1.2-py3.2.tar.gz: version 'py3.2': not a PEP 440 version"* ]]
	# a file of another project is still a rejected link
	sed -i 's|</body>|<a href="../../packages/evil-1.0.tar.gz">evil-1.0.tar.gz</a>\n</body>|' \
		"$SRV/www/legacy/simple/torch/index.html"
	run ow --json crawl --index-url "$OW_HTTP_URL/legacy/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--force --project torch
	jq -e '.pages[0] | .rejected == 1 and .skipped == 2' <<<"$output"
}

@test "a download URL longer than 2 kB (a signed query string) is kept and fetched whole" {
	# a page whose links carry a 3,200-byte signature, as presigned object URLs do
	local sig t=(--trusted-host "127.0.0.1:$OW_HTTP_PORT")
	sig=$(head -c 1600 /dev/urandom | od -An -tx1 | tr -d ' \n')
	[ "${#sig}" -eq 3200 ]
	mkdir -p "$SRV/www/signed/simple/filelock"
	ln -sfn ../pypi/packages "$SRV/www/signed/packages"
	sed "s|\.whl#sha256=|.whl?X-Amz-Signature=$sig#sha256=|" "$SRV/www/pypi/simple/filelock/index.html" \
		>"$SRV/www/signed/simple/filelock/index.html"
	grep -q "X-Amz-Signature=$sig" "$SRV/www/signed/simple/filelock/index.html"
	run ow --json crawl --index-url "$OW_HTTP_URL/signed/simple" "${t[@]}" --variant all --project filelock
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.pages[0].files > 0 and .pages[0].rejected == 0' <<<"$output"
	local fn
	fn=$(ow --json ls files --project filelock | jq -r '.files | max_by(.version) | .filename')
	run --separate-stderr ow --json fetch "${t[@]}" --index-url "$OW_HTTP_URL/signed/simple" "$fn"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	# the whole URL in the report, and on the wire (the server's log)
	jq -e --arg s "$sig" '.files[0].outcome == "done" and (.files[0].url | endswith("?X-Amz-Signature=" + $s))' <<<"$output"
	grep -q "\"GET /signed/packages/[^ ]*/$fn?X-Amz-Signature=$sig HTTP/1.1\" 200 " "$OW_NGINX_LOG"
}

# a local copy of the filelock page with links out of the index root
hostile_local_page() {
	local p=$SRV/local/simple/filelock/index.html
	[ -f "$p.orig" ] || cp "$p" "$p.orig"
	{
		sed '/<\/body>/,$d' "$p.orig"
		echo "<a href=\"file:///etc/filelock-3.0.0-py3-none-any.whl\">filelock-3.0.0-py3-none-any.whl</a><br/>"
		echo "<a href=\"$SRV/outside/filelock-3.0.1-py3-none-any.whl\">filelock-3.0.1-py3-none-any.whl</a><br/>"
		echo "<a href=\"../../../outside/filelock-3.0.2-py3-none-any.whl\">filelock-3.0.2-py3-none-any.whl</a><br/>"
		echo "<a href=\"file://$SRV/outside/filelock-3.0.3-py3-none-any.whl\">filelock-3.0.3-py3-none-any.whl</a><br/>"
		echo "</body></html>"
	} >"$p"
}

@test "a file:// index: relative links inside the root work; file:///etc, absolute paths and ../ out of the root are refused, naming the href" {
	hostile_local_page
	run ow --json crawl --index-url "file://$SRV/local/simple" --variant all --project filelock,torch
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	page=$(jq '.pages[] | select(.url | endswith("/filelock/"))' <<<"$output")
	jq -r '.rejected_reasons[]' <<<"$page"
	[ "$(jq .files <<<"$page")" -eq 2 ]
	[ "$(jq .rejected <<<"$page")" -eq 4 ]
	reasons=$(jq -r '.rejected_reasons | join("\n")' <<<"$page")
	for href in "file:///etc/filelock-3.0.0" "$SRV/outside/filelock-3.0.1" "../../../outside/filelock-3.0.2" \
		"file://$SRV/outside/filelock-3.0.3"; do
		grep -F "href \"$href-py3-none-any.whl\"" <<<"$reasons" | grep -qF "lies outside the index root \"$SRV/local/\"" ||
			{ echo "no refusal names $href"; false; }
	done
	[ "$(jq '.pages[] | select(.url | endswith("/torch/")) | .rejected' <<<"$output")" -eq 0 ]
	# the set resolves and is fetched from the local mirror
	run ow --json sync --index-url "file://$SRV/local/simple" --python "$HOSTPY" --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.complete' <<<"$output"
	[ "$(jq .resolve.links_rejected <<<"$output")" -eq 4 ]
}

@test "a file:// index given through a symlink keeps its links; --allow-file-outside-root lets them out" {
	hostile_local_page
	# the root through a symlink: links spelled with the real path stay inside
	sed "s|\.\./\.\./packages/|file://$SRV/local/packages/|" "$SRV/local/simple/filelock/index.html.orig" \
		>"$SRV/local/simple/filelock/index.html"
	run ow --json crawl --index-url "file://$SRV/link/simple" --variant all --project filelock
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.pages[0].files == 2 and .pages[0].rejected == 0' <<<"$output"
	hostile_local_page
	run ow --json crawl --index-url "file://$SRV/local/simple" --allow-file-outside-root --variant all \
		--project filelock --force
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.pages[0].files == 6 and .pages[0].rejected == 0' <<<"$output"
	"$OFFWHEEL" crawl --help | grep -q -- '--allow-file-outside-root'
}
