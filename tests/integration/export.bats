#!/usr/bin/env bats
# offwheel export / check / keygen: a signed tree from a workspace built off
# the sample index (crawl + resolve + fetch the host target's cpu set), real
# pip installs from it (find-links, file:// index, nginx over HTTP), stock
# signify and sha256sum, what check refuses (docs/export-format.md), SIGKILL at
# random moments, and an exFAT image through exfat-fuse.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" --large-files 48 --large-count 2 >/dev/null
	export OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR
	export WS=$SRV/ws KEYS=$SRV/keys
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --project torch,torchvision,torchaudio
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.11 >"$SRV/resolve.json"
	export TARGET=$(jq -r '.targets[0].target' "$SRV/resolve.json")
	export REQ=requirements/${TARGET// /-}.txt
	mapfile -t files < <(jq -r '.targets[0].members[].filename' "$SRV/resolve.json")
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	"$OFFWHEEL" --home "$WS" -q fetch --metadata "${net[@]}" "${files[@]}"
	# two large wheels (48 MiB each) for the SIGKILL test
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/large" "${net[@]}" \
		--variant cu128 --project torch
	mapfile -t big < <("$OFFWHEEL" --home "$WS" --json ls files --variant cu128 --project torch |
		jq -r '.files[] | select(.url | contains("/large/")) | .filename')
	printf '%s\n' "${big[@]}" >"$SRV/big.txt"
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${big[@]}"
	mkdir -p "$KEYS"
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
	"$OFFWHEEL" keygen "$KEYS/other.sec" >/dev/null
	"$OFFWHEEL" --home "$WS" -q export "$SRV/ex" --target "$TARGET" --sign "$KEYS/k.sec" \
		--nginx-conf "$SRV/ex.nginx.conf"
}

teardown_file() {
	ow_stop_nginx
	[ -f "$SRV/nginx2/nginx.pid" ] && kill "$(cat "$SRV/nginx2/nginx.pid")" 2>/dev/null
	mountpoint -q "$SRV/mnt" 2>/dev/null && umount "$SRV/mnt"
	[ -f "$SRV/loopdev" ] && losetup -d "$(cat "$SRV/loopdev")" 2>/dev/null
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

# chk DIR [options]: check with a per-test state file
chk() {
	local d=$1
	shift
	"$OFFWHEEL" check "$d" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}

# copy of the base export to mutate
copy_ex() {
	rm -rf "$BATS_TEST_TMPDIR/ex"
	cp -a "$SRV/ex" "$BATS_TEST_TMPDIR/ex"
	echo "$BATS_TEST_TMPDIR/ex"
}

# re-sign a (deliberately bad) tree with the stock tool and the real key:
# the signature is fine, so only the manifest checks can catch it
resign() {
	local d=$1
	(cd "$d" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.sig -printf '%P\n' | sort |
		xargs -d '\n' sha256sum >SHA256SUMS)
	rm -f "$d/SHA256SUMS.sig"
	signify-openbsd -S -s "$KEYS/k.sec" -m "$d/SHA256SUMS" -x "$d/SHA256SUMS.sig"
}

stick_mount() { # IMAGE DIR
	local dev
	dev=$(losetup -f --show "$1" 2>/dev/null) || return 1
	echo "$dev" >"$SRV/loopdev"
	mount.exfat-fuse "$dev" "$2" 2>/dev/null || { losetup -d "$dev"; return 1; }
}

stick_umount() { # DIR
	umount "$1"
	losetup -d "$(cat "$SRV/loopdev")"
}

# manifest edit with jq, then re-sign
edit_manifest() {
	local d=$1 f=$2
	jq "$f" "$d/manifest.json" >"$d/m.tmp" && mv "$d/m.tmp" "$d/manifest.json"
	resign "$d"
}

@test "the tree: PEP 503 pages, wheels + .metadata, requirements, INSTALL, manifest, sums, signature" {
	d=$SRV/ex
	[ -f "$d/simple/index.html" ] && [ -f "$d/simple/torch/index.html" ]
	[ -f "$d/$REQ" ] && [ -f "$d/INSTALL.txt" ] && [ -f "$d/manifest.json" ]
	n=$(jq '.targets[0].members | length' "$SRV/resolve.json")
	[ "$(grep -c -- '--hash=sha256:' "$d/$REQ")" -eq "$n" ]
	[ "$(ls "$d/wheels"/*.whl | wc -l)" -eq "$n" ]
	ls "$d/wheels"/torch-*.whl.metadata
	grep -q 'href="../../wheels/torch-[^"]*%2Bcpu[^"]*#sha256=[0-9a-f]\{64\}"' "$d/simple/torch/index.html"
	grep -q 'data-core-metadata="sha256=[0-9a-f]\{64\}"' "$d/simple/torch/index.html"
	grep -q 'data-requires-python="&gt;=' "$d/simple/torch/index.html"
	grep -qF -- "--find-links wheels --require-hashes -r $REQ" "$d/INSTALL.txt"
	grep -qF -- "--index-url \"file://\$PWD/simple\"" "$d/INSTALL.txt"
	[ "$(jq -r .format "$d/manifest.json")" = offwheel-export-1 ]
	[ "$(jq -r .key_id "$d/manifest.json")" = "$(sed -n 2p "$KEYS/k.pub" | base64 -d | tail -c +3 | head -c 8 | xxd -p)" ]
	[ "$(jq '.files | length' "$d/manifest.json")" -eq "$(($(wc -l <"$d/SHA256SUMS") - 1))" ]
	# stock tools verify it: signify over SHA256SUMS, sha256sum -c over everything
	(cd "$d" && signify-openbsd -V -p "$KEYS/k.pub" -m SHA256SUMS)
	(cd "$d" && sha256sum --strict -c SHA256SUMS >/dev/null)
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"valid"* ]]
	run chk "$d" --json
	[ "$(jq .valid <<<"$output")" = true ]
	[ "$(jq '.problems | length' <<<"$output")" -eq 0 ]
	grep -q 'autoindex off' "$SRV/ex.nginx.conf"
	grep -q "root $d;" "$SRV/ex.nginx.conf"
}

# INSTALL.txt's own command lines, run as a user would: from the export's root,
# the stick mounted somewhere other than where it was written
install_txt_cmds() { # STICK REGEX: the indented command lines of INSTALL.txt matching REGEX
	sed -n 's/^    //p' "$1/INSTALL.txt" | grep -E "$2"
}

moved_stick() { # copy the export to another "mount point"; prints its path
	local m=$BATS_TEST_TMPDIR/media/STICK/offwheel
	mkdir -p "${m%/*}"
	cp -a "$SRV/ex" "$m"
	echo "$m"
}

@test "export and check count the same: every file SHA256SUMS lists, and their bytes" {
	run ow --json export "$BATS_TEST_TMPDIR/same" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ]
	ex=$(jq -c '[.files, .bytes]' <<<"$output")
	run "$OFFWHEEL" --json check "$BATS_TEST_TMPDIR/same" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/st.json"
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.files, .bytes]' <<<"$output")" = "$ex" ]
	# and both are what the stock tools see: the lines of SHA256SUMS, the sizes of those files
	d=$BATS_TEST_TMPDIR/same
	[ "$(jq '.[0]' <<<"$ex")" -eq "$(wc -l <"$d/SHA256SUMS")" ]
	[ "$(jq '.[1]' <<<"$ex")" -eq "$(cd "$d" && awk '{print $2}' SHA256SUMS | xargs stat -c %s | awk '{ s += $1 } END { print s }')" ]
}

@test "INSTALL.txt's check commands work from the stick mounted elsewhere" {
	m=$(moved_stick)
	mapfile -t cmds < <(install_txt_cmds "$m" '^(offwheel check|signify-openbsd)')
	[ "${#cmds[@]}" -eq 2 ]
	[[ "${cmds[*]}" != *"$SRV/ex"* ]]
	cp "$KEYS/k.pub" "$m/../KEY.pub"
	for c in "${cmds[@]}"; do
		c=${c//KEY.pub/../KEY.pub}
		c=${c/#offwheel /\"\$OFFWHEEL\" }
		run bash -c "cd '$m' && $c"
		[ "$status" -eq 0 ] || { echo "$c: $output"; false; }
	done
}

@test "pip installs the set with INSTALL.txt's --no-index --find-links command, stick moved" {
	m=$(moved_stick)
	mapfile -t cmds < <(install_txt_cmds "$m" '^pip install --no-index --find-links wheels ')
	[ "${#cmds[@]}" -eq 1 ]
	[[ "${cmds[*]}" != *"$SRV/ex"* ]] # nothing points back to where it was written
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run bash -c "cd '$m' && PATH='$BATS_TEST_TMPDIR/v/bin':\$PATH && ${cmds[0]} -q"
	[ "$status" -eq 0 ] || { echo "${cmds[0]}: $output"; false; }
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torch .*+cpu'
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torchaudio '
}

@test "pip installs the set with INSTALL.txt's file:// PEP 503 index command, stick moved" {
	m=$(moved_stick)
	mapfile -t cmds < <(install_txt_cmds "$m" '^pip install --index-url "file')
	[ "${#cmds[@]}" -eq 1 ]
	[[ "${cmds[*]}" != *"$SRV/ex"* ]] # nothing points back to where it was written
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run bash -c "cd '$m' && PATH='$BATS_TEST_TMPDIR/v/bin':\$PATH && ${cmds[0]} -q"
	[ "$status" -eq 0 ] || { echo "${cmds[0]}: $output"; false; }
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torchvision '
}

@test "pip installs over HTTP from nginx with the --nginx-conf server block" {
	local d=$SRV/nginx2 port
	mkdir -p "$d"
	port=$(ow_free_port)
	sed "s/listen 8080;/listen 127.0.0.1:$port;/" "$SRV/ex.nginx.conf" >"$d/server.conf"
	ow_nginx_serve "$d" "$port"
	# autoindex is off: a directory is not listed; wheels/ answers with the
	# export's own flat page (wheels/index.html, signed like the rest)
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/requirements/")" = 403 ]
	curl -s "http://127.0.0.1:$port/wheels/" | grep -q '<a href="filelock-'
	python3 -m venv "$BATS_TEST_TMPDIR/fl"
	"$BATS_TEST_TMPDIR/fl/bin/pip" download -q --no-deps --no-index -d "$BATS_TEST_TMPDIR/fl-d" \
		--find-links "http://127.0.0.1:$port/wheels/" --require-hashes -r "$SRV/ex/$REQ"
	[ "$(ls "$BATS_TEST_TMPDIR/fl-d" | wc -l)" -ge 10 ]
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	"$BATS_TEST_TMPDIR/v/bin/pip" install -q --index-url "http://127.0.0.1:$port/simple" \
		--require-hashes -r "$SRV/ex/$REQ"
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torch '
	grep -q 'GET /wheels/torch-' "$d/access.log"
	kill "$(cat "$d/nginx.pid")"
}

@test "keygen interop: a key made by signify-openbsd -n signs exports that both tools verify" {
	signify-openbsd -G -n -p "$BATS_TEST_TMPDIR/s.pub" -s "$BATS_TEST_TMPDIR/s.sec"
	ow -q export "$BATS_TEST_TMPDIR/ex" --target "$TARGET" --sign "$BATS_TEST_TMPDIR/s.sec"
	signify-openbsd -V -p "$BATS_TEST_TMPDIR/s.pub" -m "$BATS_TEST_TMPDIR/ex/SHA256SUMS"
	run "$OFFWHEEL" check "$BATS_TEST_TMPDIR/ex" --pubkey "$BATS_TEST_TMPDIR/s.pub" \
		--state "$BATS_TEST_TMPDIR/state.json"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# and offwheel's secret key works in the stock tool
	echo hi >"$BATS_TEST_TMPDIR/m"
	signify-openbsd -S -s "$KEYS/k.sec" -m "$BATS_TEST_TMPDIR/m"
	signify-openbsd -V -p "$KEYS/k.pub" -m "$BATS_TEST_TMPDIR/m"
	# keygen refuses to overwrite a key
	run "$OFFWHEEL" keygen "$KEYS/k.sec"
	[ "$status" -ne 0 ]
	[[ "$output" == *"already exists"* ]]
}

@test "incremental: a second export copies nothing, a sequence number higher" {
	d=$(copy_ex)
	s1=$(jq .sequence "$d/manifest.json")
	run ow --json export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .copied <<<"$output")" -eq 0 ]
	[ "$(jq .kept <<<"$output")" -gt 0 ]
	[ "$(jq .sequence <<<"$output")" -gt "$s1" ]
	# a damaged wheel on the stick is replaced
	f=$(ls "$d"/wheels/torch-*.whl)
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$f" 100
	run ow --json export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$(jq .copied <<<"$output")" -eq 1 ]
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# into a directory holding other data: refused
	mkdir -p "$BATS_TEST_TMPDIR/other" && echo x >"$BATS_TEST_TMPDIR/other/photo.jpg"
	run ow export "$BATS_TEST_TMPDIR/other" --target "$TARGET"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not part of an export"* ]]
}

@test "--with-tool: a real .deb goes on the stick signed, dpkg reads it there, INSTALL.txt says how; refused otherwise; dropped later" {
	command -v dpkg-deb >/dev/null || skip "dpkg-deb is not installed"
	p=$BATS_TEST_TMPDIR/pkg
	mkdir -p "$p/DEBIAN" "$p/usr/bin"
	printf 'Package: offwheel\nVersion: 0.1.0\nArchitecture: all\nMaintainer: t <t@t.invalid>\nDescription: test\n' >"$p/DEBIAN/control"
	cp "$OFFWHEEL" "$p/usr/bin/offwheel"
	dpkg-deb --build -Zgzip "$p" "$BATS_TEST_TMPDIR/offwheel_0.1.0_all.deb" >/dev/null
	d=$(copy_ex)
	run ow --json export "$d" --target "$TARGET" --sign "$KEYS/k.sec" \
		--with-tool "$BATS_TEST_TMPDIR/offwheel_0.1.0_all.deb"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	cmp "$d/tools/offwheel_0.1.0_all.deb" "$BATS_TEST_TMPDIR/offwheel_0.1.0_all.deb"
	dpkg-deb --info "$d/tools/offwheel_0.1.0_all.deb" | grep -q 'Package: offwheel'
	grep -q '  tools/offwheel_0.1.0_all.deb$' "$d/SHA256SUMS"
	[ "$(jq '[.files[] | select(.path == "tools/offwheel_0.1.0_all.deb")] | length' "$d/manifest.json")" -eq 1 ]
	grep -q 'sudo apt install ./tools/offwheel_0.1.0_all.deb' "$d/INSTALL.txt"
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	signify-openbsd -V -q -p "$KEYS/k.pub" -m "$d/SHA256SUMS"
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# a changed byte in the package is caught like any other file
	cp -a "$d" "$BATS_TEST_TMPDIR/bad"
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$BATS_TEST_TMPDIR/bad/tools/offwheel_0.1.0_all.deb" 10
	run chk "$BATS_TEST_TMPDIR/bad"
	[ "$status" -eq 3 ]
	[[ "$output" == *"tools/offwheel_0.1.0_all.deb"* ]]
	# not a Debian package, or not a .deb name: refused before anything changes
	before=$(cd "$d" && find . -type f -printf '%p %s\n' | sort | sha256sum)
	echo 'not a package' >"$BATS_TEST_TMPDIR/fake.deb"
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --with-tool "$BATS_TEST_TMPDIR/fake.deb"
	[ "$status" -eq 2 ]
	[[ "$output" == *"fake.deb: not a Debian package"* ]]
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --with-tool "$OFFWHEEL"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not a package name"* ]]
	run ow export "$BATS_TEST_TMPDIR/new/ex" --target "$TARGET" --with-tool "$BATS_TEST_TMPDIR/fake.deb"
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/new" ]
	[ "$before" = "$(cd "$d" && find . -type f -printf '%p %s\n' | sort | sha256sum)" ]
	# the next export without it takes it away
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ ! -e "$d/tools/offwheel_0.1.0_all.deb" ]
	! grep -q tools/ "$d/SHA256SUMS"
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a damaged store object stops export: named, nothing of it copied, DIR left as it was found" {
	ws2=$BATS_TEST_TMPDIR/ws2
	cp -a "$WS" "$ws2"
	obj=$("$OFFWHEEL" --home "$ws2" --json ls files |
		jq -r '[.files[] | select(.filename | startswith("torchvision-")) | .object_sha256 | select(. != null)][0]')
	[ -n "$obj" ] && [ "$obj" != null ]
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(find "$ws2" -type f -name "$obj")" 300
	# a fresh DIR (two levels made by this run): nothing of it is left
	d=$BATS_TEST_TMPDIR/new/ex-bad
	run "$OFFWHEEL" --home "$ws2" --jobs 4 export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 3 ]
	[[ "$output" == *torchvision-*"store is damaged"* ]] || { echo "$output"; false; }
	[ ! -e "$BATS_TEST_TMPDIR/new" ] || { find "$BATS_TEST_TMPDIR/new"; false; }
	# fsck names the file and the same command (not just a hash, not "run fsck")
	run "$OFFWHEEL" --home "$ws2" --json fsck
	[ "$status" -eq 3 ]
	det=$(jq -r '.issues[] | select(.kind == "corrupt") | .detail' <<<"$output")
	[[ "$det" == *"it is torchvision-"*".whl; 'offwheel fetch torchvision-"*".whl' fetches it again"* ]] || { echo "$output"; false; }
	# the message names the exact command that repairs it; run as given, it does
	cmd=$(grep -o "'offwheel fetch [^']*'" <<<"$output" | head -1 | tr -d "'")
	[[ "$cmd" == "offwheel fetch torchvision-"*.whl ]] || { echo "$output"; false; }
	run "$OFFWHEEL" --home "$ws2" ${cmd#offwheel } --cert "$OW_CA_FILE" --allow-host r2.localhost
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$OFFWHEEL" --home "$ws2" -q export "$BATS_TEST_TMPDIR/fixed" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$OFFWHEEL" check "$BATS_TEST_TMPDIR/fixed" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state-fixed.json"
	[ "$status" -eq 0 ]
	# over a valid export: a damaged object among new files leaves it as it was, still valid
	mapfile -t big <"$SRV/big.txt"
	bigobj=$("$OFFWHEEL" --home "$ws2" --json ls files |
		jq -r --arg f "${big[1]}" '.files[] | select(.filename == $f) | .object_sha256')
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(find "$ws2" -type f -name "$bigobj")" 3000
	d=$(copy_ex)
	run "$OFFWHEEL" --home "$ws2" --jobs 4 export "$d" --target "$TARGET" --file "${big[0]}" \
		--file "${big[1]}" --sign "$KEYS/k.sec"
	[ "$status" -eq 3 ]
	[[ "$output" == *"${big[1]}"*"store is damaged"* ]] || { echo "$output"; false; }
	diff -r "$SRV/ex" "$d" # the copied big[0] is gone again, the old signature is back
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "--all-sets: the newest sets that are complete and fetched; the others named in one line" {
	ws2=$BATS_TEST_TMPDIR/ws2
	cp -a "$WS" "$ws2"
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	# a second target, resolved but not fetched
	"$OFFWHEEL" --home "$ws2" -q resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.12
	t2=$("$OFFWHEEL" --home "$ws2" --json ls sets | jq -r '.sets[] | select(.target | contains("cp312")) | .target' | head -1)
	[ -n "$t2" ]
	d=$BATS_TEST_TMPDIR/all
	run "$OFFWHEEL" --home "$ws2" export "$d" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"--all-sets: left out 1 set: set "*"($t2): not fetched ("*" files)"* ]] || { echo "$output"; false; }
	[ "$(grep -c -- '--all-sets: left out' <<<"$output")" -eq 1 ]
	[ -f "$d/requirements/${TARGET// /-}.txt" ]
	[ ! -e "$d/requirements/${t2// /-}.txt" ]
	run chk "$d"
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" --home "$ws2" --json export "$BATS_TEST_TMPDIR/all2" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.skipped[0].target' <<<"$output")" = "$t2" ]
	[[ "$(jq -r '.skipped[0].reason' <<<"$output")" == "not fetched ("* ]]
	# nothing complete and fetched: an error, and DIR is not made
	"$OFFWHEEL" --home "$ws2" -q gc --keep 1 --prune=now >/dev/null 2>&1 || true
	ws3=$BATS_TEST_TMPDIR/ws3
	mkdir -p "$ws3"
	"$OFFWHEEL" --home "$ws3" -q resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.12
	run "$OFFWHEEL" --home "$ws3" export "$BATS_TEST_TMPDIR/none/x" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 4 ]
	[[ "$output" == *"none of the 1 newest sets is complete and fetched"* ]] || { echo "$output"; false; }
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
}

@test "--nginx-conf inside DIR is refused before anything changes; outside it is written" {
	d=$(copy_ex)
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --nginx-conf "$d/nginx.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--nginx-conf $d/nginx.conf: inside the export"* ]] || { echo "$output"; false; }
	[ ! -e "$d/nginx.conf" ]
	diff -r "$SRV/ex" "$d"
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --nginx-conf "$d/wheels/../x.conf"
	[ "$status" -ne 0 ]
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --nginx-conf "$BATS_TEST_TMPDIR/no/such/x.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *"name a file in an existing directory"* ]]
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec" --nginx-conf "$BATS_TEST_TMPDIR/x.conf"
	[ "$status" -eq 0 ]
	grep -qF "$d" "$BATS_TEST_TMPDIR/x.conf"
	run chk "$d"
	[ "$status" -eq 0 ]
}

@test "check: unknown key" {
	run "$OFFWHEEL" check "$SRV/ex" --pubkey "$KEYS/other.pub" --state "$BATS_TEST_TMPDIR/s.json"
	[ "$status" -eq 3 ]
	[[ "$output" == *"unknown key"* ]]
}

@test "check: bad signature (signed file changed, or signature bytes changed)" {
	d=$(copy_ex)
	# change the first hex digit of the signed file (to another digit: a hash
	# that already starts with 0 must not stay unchanged)
	sed -i '1{s/^0/1/;t;s/^./0/}' "$d/SHA256SUMS"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"bad signature"* ]]
	d=$(copy_ex)
	python3 - "$d/SHA256SUMS.sig" <<-'PY'
		import base64, sys
		p = sys.argv[1]
		c, b = open(p).read().splitlines()
		raw = bytearray(base64.b64decode(b)); raw[40] ^= 1
		open(p, "w").write(c + "\n" + base64.b64encode(raw).decode() + "\n")
	PY
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"bad signature"* ]]
}

@test "check: edited signed comment (manifest comment, sequence or expiry changed after signing)" {
	d=$(copy_ex)
	jq '.comment = "offwheel export sequence 999" | .expires_unix = 4102444800' "$d/manifest.json" >"$d/m"
	mv "$d/m" "$d/manifest.json"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"manifest.json"*"manifest edited after signing"* ]]
	# the signify comment line itself is untrusted and not signed: editing it changes nothing
	d=$(copy_ex)
	sed -i '1s/.*/untrusted comment: trust me/' "$d/SHA256SUMS.sig"
	run chk "$d"
	[ "$status" -eq 0 ]
}

@test "check: trailing data after the signature" {
	d=$(copy_ex)
	echo "extra" >>"$d/SHA256SUMS.sig"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"trailing data"* ]]
}

@test "check: rollback to an older sequence is refused" {
	old=$(copy_ex)
	mv "$old" "$BATS_TEST_TMPDIR/old"
	new=$(copy_ex)
	ow -q export "$new" --target "$TARGET" --sign "$KEYS/k.sec"
	run chk "$new"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk "$BATS_TEST_TMPDIR/old"
	[ "$status" -eq 3 ]
	[[ "$output" == *"rollback"*"older than sequence"* ]]
	run chk "$new" # the same or newer is still fine
	[ "$status" -eq 0 ]
}

@test "check: expired, in days (hours under a day); --json expires is a Unix time" {
	exp=$(jq .expires_unix "$SRV/ex/manifest.json")
	run chk "$SRV/ex" --at $((exp + 10))
	[ "$status" -eq 3 ]
	[[ "$output" == *"expired less than an hour ago"* ]] || { echo "$output"; false; }
	run chk "$SRV/ex" --at $((exp + 3 * 86400 + 100))
	[ "$status" -eq 3 ]
	[[ "$output" == *"expired 3 days ago — make a fresh export"* ]] || { echo "$output"; false; }
	run chk "$SRV/ex" --at $((exp + 7200))
	[[ "$output" == *"expired 2 hours ago"* ]]
	run chk "$SRV/ex" --at $((exp - 10))
	[ "$status" -eq 0 ]
	run chk "$SRV/ex" --at $((exp - 10)) --json
	[ "$(jq .expires <<<"$output")" = "$exp" ]
	[ "$(jq 'has("expires_unix")' <<<"$output")" = false ]
}

@test "check --pubkey with the secret key says so; export --sign with the public key too" {
	run "$OFFWHEEL" check "$SRV/ex" --pubkey "$KEYS/k.sec" --state "$BATS_TEST_TMPDIR/s.json"
	[ "$status" -ne 0 ]
	[[ "$output" == *"k.sec: this is a secret key, not a public one — give its .pub"* ]] || { echo "$output"; false; }
	d=$(copy_ex)
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.pub"
	[ "$status" -ne 0 ]
	[[ "$output" == *"k.pub: this is a public key — signing needs the secret key"* ]] || { echo "$output"; false; }
	diff -r "$SRV/ex" "$d"
}

@test "check: extra, missing, changed and truncated files; links" {
	d=$(copy_ex)
	echo evil >"$d/wheels/evil-1.0-py3-none-any.whl"
	rm "$d/wheels/"filelock-*.whl
	f=$(ls "$d"/wheels/torchvision-*.whl)
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$f" 200
	truncate -s -1 "$(ls "$d"/wheels/sympy-*.whl)"
	ln -s /etc/passwd "$d/simple/passwd"
	run chk "$d"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"extra"*"evil-1.0-py3-none-any.whl"* ]]
	[[ "$output" == *"missing"*"filelock-"* ]]
	[[ "$output" == *"hash"*"torchvision-"* ]]
	[[ "$output" == *"size"*"sympy-"* ]]
	[[ "$output" == *"link"*"simple/passwd"* ]]
	run chk "$d" --json
	[ "$(jq '.problems | length' <<<"$output")" -eq 5 ]
	# sha256sum -c agrees that something is wrong
	run bash -c "cd '$d' && sha256sum -c --quiet SHA256SUMS"
	[ "$status" -ne 0 ]
}

@test "check: case collisions in the manifest" {
	d=$(copy_ex)
	f=$(cd "$d/wheels" && ls torch-*.whl)
	cp "$d/wheels/$f" "$d/wheels/T${f#t}"
	edit_manifest "$d" ".files += [.files[] | select(.path == \"wheels/$f\") | .path = \"wheels/T${f#t}\"]"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"only in case"* ]]
}

@test "check: '..', absolute and backslash paths in the manifest" {
	for p in "../outside.whl" "/etc/passwd" 'wheels\\x.whl' "wheels/../../x"; do
		d=$(copy_ex)
		edit_manifest "$d" ".files += [{\"path\": \"$p\", \"size\": 1, \"sha256\": \"$(printf '0%.0s' {1..64})\"}]"
		run chk "$d"
		echo "$p: $output"
		[ "$status" -eq 3 ]
		[[ "$output" == *"path"* ]]
		[[ "$output" == *"component"* || "$output" == *"absolute"* || "$output" == *"backslash"* ]]
	done
}

# plant_and_refuse DIR N: put a link or a FIFO into an interrupted export;
# the next export must refuse it at once (no hang), name it, write nothing
# outside DIR; then the plant is taken away again
plant_and_refuse() {
	local d=$1 n=$2 out=$BATS_TEST_TMPDIR/outside name sum
	mkdir -p "$out" "$d/wheels" "$d/simple"
	echo sentinel >"$out/index.html"
	sum=$(cd "$out" && find . -printf '%p %y %s\n' | sort; cat index.html)
	case $((n % 4)) in
	0) name=simple/evil; ln -s "$out" "$d/$name" ;;
	1) name=wheels/planted-1.0-py3-none-any.whl; ln -s "$out/index.html" "$d/$name" ;;
	2) name=INSTALL.txt; rm -f "$d/$name"; mkfifo "$d/$name" ;;
	3) name=wheels/fifo-1.0-py3-none-any.whl; mkfifo "$d/$name" ;;
	esac
	run timeout 60 "$OFFWHEEL" --home "$WS" "${args[@]}"
	[ "$status" -eq 1 ] || { echo "plant $name: exit $status: $output"; false; }
	[[ "$output" == *"$name ("* ]] || { echo "plant $name: $output"; false; }
	[ "$sum" = "$(cd "$out" && find . -printf '%p %y %s\n' | sort; cat index.html)" ]
	rm -f "$d/$name"
}

@test "SIGKILL at 30 random moments, links and FIFOs planted between runs: never valid while incomplete, never hangs or writes outside, the re-run completes it" {
	mapfile -t big <"$SRV/big.txt"
	d=$BATS_TEST_TMPDIR/killed
	args=(export "$d" --target "$TARGET" --sign "$KEYS/k.sec")
	for b in "${big[@]}"; do args+=(--file "$b"); done
	# how long a full export takes, to spread the kills over it
	t0=$(date +%s%N)
	ow -q "${args[@]}"
	full_ms=$((($(date +%s%N) - t0) / 1000000 + 20))
	rm -rf "$d"
	valid_early=0
	for i in $(seq 30); do
		[ $((i % 3)) -eq 0 ] && rm -rf "$d" # some from scratch, most over a previous try
		"$OFFWHEEL" --home "$WS" -q "${args[@]}" 2>/dev/null & # the binary itself, not a subshell
		pid=$!
		sleep "$(awk -v m="$full_ms" -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % m) / 1000 }')"
		kill -KILL "$pid" 2>/dev/null && killed=1 || killed=0
		wait "$pid" && finished=1 || finished=0
		run chk "$d"
		if [ "$killed" -eq 1 ] && [ "$finished" -eq 0 ]; then
			# killed before it finished: check must not call it valid — unless the
			# kill landed after the signature was written (then it is complete)
			if [ "$status" -eq 0 ]; then
				valid_early=$((valid_early + 1))
				(cd "$d" && sha256sum --strict -c --quiet SHA256SUMS)
				[ -z "$(find "$d" -name '.ow-tmp-*')" ]
			else
				[ "$status" -eq 3 ]
			fi
		fi
		if [ $((i % 3)) -eq 1 ]; then plant_and_refuse "$d" "$i"; fi
	done
	ow -q "${args[@]}"
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ -z "$(find "$d" -name '.ow-tmp-*')" ]
	echo "# kills after the signature was written (complete tree): $valid_early" >&3
}

@test "--fat32 refuses files of 4 GiB and more; names with ':' are never written" {
	run ow export "$BATS_TEST_TMPDIR/f" --target "$TARGET" --fat32
	[ "$status" -eq 0 ] # small wheels pass
	# a fake 5 GiB object size in the index must be refused before copying
	sqlite3 "$WS/index.db" "UPDATE objects SET size = 5368709120 WHERE sha256 = (SELECT object_sha256 FROM files WHERE filename LIKE 'filelock-%' AND object_sha256 IS NOT NULL LIMIT 1)"
	run ow export "$BATS_TEST_TMPDIR/f2" --target "$TARGET" --fat32
	real=$(stat -c %s "$SRV/ex/wheels/$(cd "$SRV/ex/wheels" && ls filelock-*.whl)")
	sqlite3 "$WS/index.db" "UPDATE objects SET size = $real WHERE size = 5368709120"
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAT32 stores at most 4 GiB"* ]]
	[ -z "$(find "$BATS_TEST_TMPDIR/f2" -name 'filelock-*' 2>/dev/null)" ]
}

@test "exFAT image through exfat-fuse: export, unmount, remount, check; a flipped byte is caught" {
	command -v mkfs.exfat >/dev/null || skip "mkfs.exfat not installed (apt-get install exfatprogs)"
	command -v mount.exfat-fuse >/dev/null || skip "exfat-fuse not installed (apt-get install exfat-fuse)"
	[ -e /dev/fuse ] || skip "no /dev/fuse here"
	img=$SRV/stick.img mnt=$SRV/mnt
	truncate -s 64M "$img"
	mkfs.exfat "$img" >/dev/null
	mkdir -p "$mnt"
	# exfat-fuse mounts block devices only: attach the image to a loop device
	stick_mount "$img" "$mnt" || skip "cannot attach a loop device or mount through FUSE here"
	run ow --json export "$mnt/offwheel" --target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r .fs <<<"$output")" = fuse ]
	stick_umount "$mnt"
	stick_mount "$img" "$mnt"
	run chk "$mnt/offwheel"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	stick_umount "$mnt"
	# flip one byte of the torch wheel's data inside the image
	python3 - "$img" "$SRV/ex/wheels/$(cd "$SRV/ex/wheels" && ls torch-*.whl)" <<-'PY'
		import sys
		img, whl = sys.argv[1], sys.argv[2]
		data = open(whl, "rb").read()
		needle = data[64:128]
		raw = bytearray(open(img, "rb").read())
		at = raw.find(needle)
		assert at >= 0, "wheel bytes not found in the image"
		raw[at + 10] ^= 0xFF
		open(img, "wb").write(raw)
	PY
	stick_mount "$img" "$mnt"
	run chk "$mnt/offwheel"
	stick_umount "$mnt"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"hash"*"torch-"* ]]
}

@test "check https://: the export behind a web server (nginx, TLS with the test CA), every file streamed through SHA-256; a changed file served is named" {
	rm -rf "$SRV/www/stick"
	cp -a "$SRV/ex" "$SRV/www/stick"
	run chk "$OW_HTTPS_URL/stick" --cert "$OW_CA_FILE"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ $output == *"valid"* ]]
	# without the CA the TLS failure is named, never "valid"
	run env -u SSL_CERT_FILE "$OFFWHEEL" check "$OW_HTTPS_URL/stick" --pubkey "$KEYS/k.pub" \
		--state "$BATS_TEST_TMPDIR/s2.json"
	[ "$status" -eq 4 ] # a TLS error: the server could not be read, no verdict
	[[ $output == *"TLS"* || $output == *"SSL"* || $output == *"certificate"* ]]
	w=$(ls "$SRV/www/stick/wheels" | grep '^filelock-.*\.whl$')
	printf 'x' | dd of="$SRV/www/stick/wheels/$w" bs=1 seek=100 conv=notrunc status=none
	run chk "$OW_HTTPS_URL/stick" --cert "$OW_CA_FILE"
	[ "$status" -eq 3 ]
	[[ $output == *"hash"*"wheels/$w"* ]]
	rm -rf "$SRV/www/stick"
}
