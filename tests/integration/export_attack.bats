#!/usr/bin/env bats
# export / check / keygen under attack: a careless user and a hostile stick.
# Every test runs the real binary on a real signed export of the sample
# index's host cpu set and asserts the promise: nothing outside DIR changes
# (a sentinel tree is checksummed before and after), the user's files stay,
# the exit code, and a message that names the thing.  Everything that could
# hang runs under `timeout`, so a hang fails instead of blocking.

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
	export REQ=requirements/${TARGET// /-}.txt
	mapfile -t files < <(jq -r '.targets[0].members[].filename' "$SRV/resolve.json")
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	"$OFFWHEEL" --home "$WS" -q fetch --metadata "${net[@]}" "${files[@]}"
	mkdir -p "$KEYS"
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
	"$OFFWHEEL" --home "$WS" -q export "$SRV/ex" --target "$TARGET" --sign "$KEYS/k.sec"
	ow_stop_nginx
}

teardown_file() {
	rm -rf "$SRV"
}

setup() {
	# a sentinel tree beside every export: links planted in DIR point into it
	OUT=$BATS_TEST_TMPDIR/outside
	mkdir -p "$OUT/sub"
	echo "keep me" >"$OUT/index.html"
	echo "keep me too" >"$OUT/sub/file.txt"
	echo "not a wheel" >"$OUT/secret.whl"
	OUT_SUM=$(tree_sum "$OUT")
}

# path, type, size and content hash of everything under a directory
tree_sum() {
	(cd "$1" && find . -printf '%p %y %s %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum
}

outside_unchanged() {
	[ "$(tree_sum "$OUT")" = "$OUT_SUM" ] || { echo "the sentinel outside DIR changed"; ls -laR "$OUT"; false; }
}

ow() { timeout 60 "$OFFWHEEL" --home "$WS" "$@"; }

# exp DIR [args]: export the target into DIR, signed (timeout: a hang fails)
exp() {
	local d=$1
	shift
	timeout 60 "$OFFWHEEL" --home "$WS" export "$d" --target "$TARGET" --sign "$KEYS/k.sec" "$@"
}

chk() {
	local d=$1
	shift
	timeout 60 "$OFFWHEEL" check "$d" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}

copy_ex() {
	rm -rf "$BATS_TEST_TMPDIR/ex"
	cp -a "$SRV/ex" "$BATS_TEST_TMPDIR/ex"
	echo "$BATS_TEST_TMPDIR/ex"
}

# a copy of the workspace for tests that damage it
copy_ws() {
	rm -rf "$BATS_TEST_TMPDIR/ws"
	cp -a "$WS" "$BATS_TEST_TMPDIR/ws"
	echo "$BATS_TEST_TMPDIR/ws"
}

resign() {
	local d=$1
	(cd "$d" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.sig -printf '%P\n' | sort |
		xargs -d '\n' sha256sum >SHA256SUMS)
	rm -f "$d/SHA256SUMS.sig"
	signify-openbsd -S -s "$KEYS/k.sec" -m "$d/SHA256SUMS" -x "$d/SHA256SUMS.sig"
}

@test "a user's files in DIR are never deleted: export refuses, names them, changes nothing" {
	d=$(copy_ex)
	echo mine >"$d/wheels/my-own-1.0-py3-none-any.whl"
	echo "pytest" >"$d/requirements/dev.txt"
	mkdir -p "$d/simple/other"
	echo "<a href=x>x</a>" >"$d/simple/other/index.html"
	before=$(tree_sum "$d")
	run exp "$d"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"wheels/my-own-1.0-py3-none-any.whl"* ]]
	[[ "$output" == *"requirements/dev.txt"* ]]
	[[ "$output" == *"simple/other/index.html"* ]]
	[[ "$output" == *"not part of an export"* ]]
	[[ "$output" == *"nothing was changed"* ]]
	[ "$(tree_sum "$d")" = "$before" ] # not even the old signature was dropped
	[ "$(cat "$d/wheels/my-own-1.0-py3-none-any.whl")" = mine ]
	# moved out of the way, the export goes through
	rm -r "$d/wheels/my-own-1.0-py3-none-any.whl" "$d/requirements/dev.txt" "$d/simple/other"
	run exp "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "only files of the previous signed list are removed, and only when unchanged" {
	d=$(copy_ex)
	one=$(cd "$d/wheels" && ls filelock-*.whl)
	# a smaller export into the same DIR: the files it no longer holds were
	# listed by the signed SHA256SUMS, unchanged -> removed
	run ow --json export "$d" --file "$one" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .removed <<<"$output")" -gt 0 ]
	[ -z "$(ls "$d/wheels" | grep -v -e '^filelock-' -e '^index\.html$')" ]
	[ ! -e "$d/$REQ" ] && [ ! -d "$d/simple/torch" ]
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# a listed file that was changed since is not removed: refused, named
	d=$(copy_ex)
	echo "# my note" >>"$d/$REQ"
	f=$(ls "$d"/wheels/torchvision-*.whl)
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$f" 100
	before=$(tree_sum "$d")
	run ow export "$d" --file "$one" --sign "$KEYS/k.sec"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$REQ (changed since the previous export listed it)"* ]]
	[[ "$output" == *"wheels/torchvision-"*"changed since"* ]]
	[ "$(tree_sum "$d")" = "$before" ]
	# signed by another key, and a manifest this workspace never wrote: the
	# list is not trusted, nothing is removed
	d=$(copy_ex)
	"$OFFWHEEL" keygen "$BATS_TEST_TMPDIR/o.sec" >/dev/null
	jq '.comment = "edited"' "$d/manifest.json" >"$d/m" && mv "$d/m" "$d/manifest.json"
	before=$(tree_sum "$d")
	run ow export "$d" --file "$one" --sign "$BATS_TEST_TMPDIR/o.sec"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$REQ (not part of an export"* ]]
	[ "$(tree_sum "$d")" = "$before" ]
}

@test "a link where an export directory belongs is refused: nothing written through it" {
	for where in wheels requirements simple simple/torch; do
		d=$(copy_ex)
		rm -rf "$d/$where"
		ln -s "$OUT" "$d/$where"
		run exp "$d"
		echo "$where: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$where"*"symbolic link"* ]]
		outside_unchanged
		[ -e "$d/SHA256SUMS.sig" ] # refused before anything changed
	done
	# a link deeper down, to a directory or a file, and a file link at an export name
	for plant in "simple/evil:$OUT" "wheels/linked.whl:$OUT/secret.whl" "INSTALL.txt:$OUT/index.html"; do
		d=$(copy_ex)
		rm -f "$d/${plant%%:*}"
		ln -s "${plant#*:}" "$d/${plant%%:*}"
		run exp "$d"
		echo "$plant: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"${plant%%:*} (a symbolic link"* ]]
		outside_unchanged
	done
}

@test "DIR itself may be a link: resolved once, the export is written inside its target" {
	d=$(copy_ex)
	ln -s "$d" "$BATS_TEST_TMPDIR/stick"
	run exp "$BATS_TEST_TMPDIR/stick"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ -L "$BATS_TEST_TMPDIR/stick" ]
	run chk "$BATS_TEST_TMPDIR/stick"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a FIFO under an export name never hangs export: refused, named, lock released" {
	w=$(ls "$SRV/ex/wheels" | grep '^torch-' | head -1)
	for name in manifest.json SHA256SUMS SHA256SUMS.sig INSTALL.txt "wheels/$w" "$REQ"; do
		d=$(copy_ex)
		rm -f "$d/$name"
		mkfifo "$d/$name"
		run exp "$d"
		echo "$name: $output"
		[ "$status" -ne 124 ] # did not hang
		[ "$status" -eq 1 ]
		[[ "$output" == *"$name (not a regular file)"* ]]
	done
}

@test "a store object replaced by a FIFO or a link to /dev/zero: exit 3, named, nothing streamed" {
	for kind in fifo zero; do
		ws=$(copy_ws)
		obj=$("$OFFWHEEL" --home "$ws" --json ls files |
			jq -r '[.files[] | select(.filename | startswith("torch-")) | .object_sha256 | select(. != null)][0]')
		p=$(find "$ws/objects" -name "$obj")
		rm -f "$p"
		if [ $kind = fifo ]; then mkfifo "$p"; else ln -s /dev/zero "$p"; fi
		d=$BATS_TEST_TMPDIR/ex-$kind
		# at most 64 MiB per file: a stream from /dev/zero is cut off, not the disk filled
		run bash -c "ulimit -f 65536; timeout 30 '$OFFWHEEL' --home '$ws' export '$d' --target '$TARGET' --sign '$KEYS/k.sec'"
		echo "$kind: $output"
		[ "$status" -eq 3 ]
		[[ "$output" == *"$obj"* ]]
		[[ "$output" == *"store is damaged"* ]]
		# a failed export into a fresh DIR leaves nothing behind
		[ ! -e "$d" ] || { find "$d"; false; }
	done
}

@test "the sequence never comes from unsigned bytes, and stays far below overflow" {
	d=$(copy_ex)
	last=$(sqlite3 "$WS/index.db" "SELECT max(sequence) FROM exports WHERE key_id = '$(jq -r .key_id "$d/manifest.json")'")
	# (sed, not jq: jq rounds integers beyond 2^53)
	sed -i 's/"sequence": [0-9]*/"sequence": 9223372036854775806/' "$d/manifest.json"
	grep -q '"sequence": 9223372036854775806,' "$d/manifest.json"
	run ow --json export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# max(last + 1, now): never the edited value
	now=$(date +%s) seq=$(jq .sequence <<<"$output")
	[ "$seq" -ge $((last + 1)) ] && [ "$seq" -le $((last + 1 > now ? last + 1 : now)) ]
	[ "$(jq .sequence "$d/manifest.json")" -eq "$seq" ]
	# re-signed with the real key, the stick's sequence counts — but out of range is an error
	d=$(copy_ex)
	sed -i 's/"sequence": [0-9]*/"sequence": 1152921504606846976/' "$d/manifest.json"
	resign "$d"
	run ow export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"sequence 1152921504606846976 is out of range"* ]]
	[ -e "$d/SHA256SUMS.sig" ] # nothing changed
	# check refuses such a sequence too
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"out of range"* ]]
}

@test "a new workspace continuing a key and name: check says --sequence, export --sequence N fixes it" {
	d=$(copy_ex)
	# a stick signed far ahead of the clock (its workspace's clock was ahead)
	ahead=$(($(date +%s) + 1000000))
	exp "$d" --sequence "$ahead" >/dev/null
	run chk "$d"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	seq=$(jq .sequence "$d/manifest.json")
	[ "$seq" -eq "$ahead" ]
	# a workspace that knows nothing of it makes another stick of the same name
	ws=$(copy_ws)
	sqlite3 "$ws/index.db" "DELETE FROM exports"
	n=$BATS_TEST_TMPDIR/new/ex
	run timeout 60 "$OFFWHEEL" --home "$ws" export "$n" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .sequence "$n/manifest.json")" -lt "$seq" ]
	run chk "$n"
	[ "$status" -eq 3 ]
	[[ "$output" == *"rollback"*"'ex'"*"--sequence $((seq + 1))"* ]]
	run timeout 60 "$OFFWHEEL" --home "$ws" export "$n" --target "$TARGET" --sign "$KEYS/k.sec" \
		--sequence $((seq + 1))
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run chk "$n"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# not above what the workspace signed: refused; out of range: usage error
	run timeout 60 "$OFFWHEEL" --home "$ws" export "$n" --target "$TARGET" --sign "$KEYS/k.sec" \
		--sequence "$seq"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--sequence $seq: not above $((seq + 1))"* ]]
	run timeout 60 "$OFFWHEEL" --home "$ws" export "$n" --target "$TARGET" --sequence 9007199254740993
	[ "$status" -eq 2 ]
}

@test "check never crashes on a missing or unreadable public key" {
	mkdir -p "$BATS_TEST_TMPDIR/keydir"
	mkfifo "$BATS_TEST_TMPDIR/key.fifo"
	for k in "$BATS_TEST_TMPDIR/missing.pub" "$BATS_TEST_TMPDIR/keydir" "$BATS_TEST_TMPDIR/key.fifo"; do
		run timeout 20 "$OFFWHEEL" check "$SRV/ex" --pubkey "$k" --state "$BATS_TEST_TMPDIR/s.json"
		echo "$k: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$k"* ]]
	done
	run timeout 20 "$OFFWHEEL" check "$SRV/ex" --pubkey "$BATS_TEST_TMPDIR/missing.pub"
	[[ "$output" == *"No such file"* ]]
	run timeout 20 "$OFFWHEEL" check "$SRV/ex" --pubkey "$BATS_TEST_TMPDIR/keydir"
	[[ "$output" == *"is a directory"* ]]
	# no export there at all (killed before it began): not valid, named
	run chk "$BATS_TEST_TMPDIR/no-such-stick"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no-such-stick: cannot open the export directory"* ]]
}

@test "check: a FIFO, a device or a link on the stick is damage (exit 3), never read" {
	w=$(ls "$SRV/ex/wheels" | grep '^torch-' | head -1)
	for name in SHA256SUMS.sig SHA256SUMS manifest.json "wheels/$w"; do
		d=$(copy_ex)
		rm -f "$d/$name"
		mkfifo "$d/$name"
		run chk "$d"
		echo "$name: $output"
		[ "$status" -ne 124 ]
		[ "$status" -eq 3 ]
		[[ "$output" == *"$name"*"FIFO"* ]]
	done
	d=$(copy_ex)
	rm -f "$d/wheels/$w"
	ln -s /dev/zero "$d/wheels/$w"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"link"*"wheels/$w"* ]]
	# a link where a directory belongs: the files behind it are not read
	d=$(copy_ex)
	mv "$d/wheels" "$OUT/wheels"
	ln -s "$OUT/wheels" "$d/wheels"
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" == *"link"*"wheels"* ]]
	[[ "$output" == *"wheels: is a symbolic link"* ]]
}

@test "keygen: a secret key named .pub is refused; an existing key is kept without --force" {
	cd "$BATS_TEST_TMPDIR"
	run "$OFFWHEEL" keygen lab.pub
	[ "$status" -eq 2 ]
	[[ "$output" == *"lab.pub"*"KEY.sec"* ]]
	[ ! -e lab.pub ] && [ ! -e lab.pub.pub ]
	"$OFFWHEEL" keygen lab.sec >/dev/null
	[ "$(stat -c %a lab.sec)" = 600 ]
	sec=$(sha256sum <lab.sec) pub=$(sha256sum <lab.pub)
	run "$OFFWHEEL" keygen lab.sec
	[ "$status" -eq 1 ]
	[[ "$output" == *"already exists"*"--force"* ]]
	[ "$(sha256sum <lab.sec)" = "$sec" ] && [ "$(sha256sum <lab.pub)" = "$pub" ]
	# the public key name taken by another file: kept too
	echo "my notes" >other.pub
	run "$OFFWHEEL" keygen other
	[ "$status" -eq 1 ]
	[ "$(cat other.pub)" = "my notes" ]
	run "$OFFWHEEL" keygen --force lab.sec
	[ "$status" -eq 0 ]
	[ "$(sha256sum <lab.sec)" != "$sec" ]
	signify-openbsd -S -s lab.sec -m other.pub -x m.sig
	signify-openbsd -V -p lab.pub -m other.pub -x m.sig
}

@test "export \"\" is a usage error that says so" {
	run ow export "" --target "$TARGET"
	[ "$status" -eq 2 ]
	[[ "$output" == *"empty"* ]]
	[[ "$output" != *"too long"* ]]
}

@test "--json is exactly one JSON document whatever the bytes of DIR; hostile names shown escaped" {
	d=$BATS_TEST_TMPDIR/$'stick-\xff\xfe'
	cp -a "$SRV/ex" "$d"
	run --separate-stderr ow --json export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jq -s length <<<"$output")" -eq 1 ]
	[ "$(jq -r .dir_base64 <<<"$output" | base64 -d)" = "$d" ]
	run --separate-stderr chk "$d" --json
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -s length <<<"$output")" -eq 1 ]
	[ "$(jq .valid <<<"$output")" = true ]
	# a name with ESC and a newline on the stick: reported, never replayed
	touch "$d/wheels/"$'evil\e[2J\nname.whl'
	run chk "$d"
	[ "$status" -eq 3 ]
	[[ "$output" != *$'\e'* ]]
	[[ "$output" == *'evil\x1b[2J\x0aname.whl'* ]] || { echo "$output"; false; }
	run --separate-stderr chk "$d" --json
	[ "$(jq -s length <<<"$output")" -eq 1 ]
	[ "$(jq '.problems | length' <<<"$output")" -eq 1 ]
}

@test "--with-tool: a file name outside Debian's characters never reaches INSTALL.txt (exit 2, named)" {
	d=$(copy_ex)
	before=$(tree_sum "$d")
	mkdir -p "$BATS_TEST_TMPDIR/debs"
	cd "$BATS_TEST_TMPDIR"
	for name in 'debs/$(touch PWNED).deb' 'debs/a b.deb' 'debs/x;id.deb' $'debs/\xff.deb' 'debs/.hidden.deb'; do
		printf '!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n' >"$name"
		run -2 timeout 60 "$OFFWHEEL" --home "$WS" export "$d" --target "$TARGET" --sign "$KEYS/k.sec" \
			--with-tool "$name"
		[[ $output == *"not a package name to put on a stick"*"letters, digits and . _ + ~ -"* ]] ||
			{ echo "$name: $output"; false; }
		[[ $output != *$'\xff'* ]] # shown escaped, never replayed
		[ ! -e PWNED ] && [ ! -e "$d/PWNED" ]
		[ "$(tree_sum "$d")" = "$before" ] || { echo "$name: the stick changed"; false; }
	done
	[[ $output == *"debs/.hidden.deb"* ]]
	run -2 timeout 60 "$OFFWHEEL" --home "$WS" export "$d" --target "$TARGET" --with-tool $'debs/\xff.deb'
	[[ $output == *'debs/\xff.deb'* ]] || { echo "$output"; false; }
	# Debian's own spelling passes the name rule
	printf '!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n' >"debs/offwheel_0.1.0+git~1_amd64.deb"
	run timeout 60 "$OFFWHEEL" --home "$WS" export "$d" --target "$TARGET" --sign "$KEYS/k.sec" \
		--with-tool "debs/offwheel_0.1.0+git~1_amd64.deb"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	grep -qF 'sudo apt install ./tools/offwheel_0.1.0+git~1_amd64.deb' "$d/INSTALL.txt"
}

@test "check --state FIFO: a state problem at once (exit 3, as an unreadable state), naming it, never waited on" {
	mkfifo "$BATS_TEST_TMPDIR/state.fifo"
	run timeout 20 "$OFFWHEEL" check "$SRV/ex" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.fifo"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"state file $BATS_TEST_TMPDIR/state.fifo is a FIFO, not a regular file"* ]]
	[ -p "$BATS_TEST_TMPDIR/state.fifo" ]
}

@test "export s3:// to a store that cannot be reached: exit 1 as docs/export.md says, naming the store" {
	run env AWS_ACCESS_KEY_ID=AKX AWS_SECRET_ACCESS_KEY=SKX timeout 120 "$OFFWHEEL" --home "$WS" \
		export s3://lab/x --endpoint http://127.0.0.1:9 --target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"s3://lab/x/"*"127.0.0.1"*"check --endpoint and that the store is up"* ]]
	grep -q "unreachable store: exit 1" "$OW_SOURCE_DIR/docs/export.md"
}
