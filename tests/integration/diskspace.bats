#!/usr/bin/env bats
# A full disk is found before the first byte: the workspace lives on a real
# small filesystem (an 8 MiB tmpfs, mounted in a private mount namespace with
# unshare), the index offers 12 MiB wheels; fetch and sync refuse each one
# that would not fit, say how much it needs and how much is free, write
# nothing of it, exit 1, and leave a workspace fsck finds clean.  --force
# skips the check (and the write then fails on the full disk, as before).

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV" --large-files 12 --large-count 1
	export OFFWHEEL
	# a private mount namespace: root's, or an unprivileged user's own
	export NS=""
	for ns in "unshare -m" "unshare -rm"; do
		if $ns sh -c "mount -t tmpfs -o size=8m tmpfs '$SRV' 2>/dev/null" 2>/dev/null; then
			NS=$ns
			break
		fi
	done
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# on_small_disk CMD...: run CMD with $D an 8 MiB tmpfs holding the workspace
on_small_disk() {
	[ -n "$NS" ] || skip "no private mount namespace here (unshare -m / -rm refused): cannot make a small filesystem"
	mkdir -p "$BATS_TEST_TMPDIR/disk"
	$NS sh -c 'mount -t tmpfs -o size=8m tmpfs "$0" && D="$0" && export D && "$@"' \
		"$BATS_TEST_TMPDIR/disk" "$@"
}

# the inner scripts see OFFWHEEL, OW_HTTPS_URL and OW_CA_FILE from the environment
@test "fetch of a wheel larger than the free space: exit 1 before its first byte, naming need and free" {
	run on_small_disk bash -c '
		net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
		"$OFFWHEEL" --home "$D/ws" -q crawl --index-url "$OW_HTTPS_URL/whl/large" "${net[@]}" \
			--variant cu128 --project torch || exit 90
		big=$("$OFFWHEEL" --home "$D/ws" --json ls files --variant cu128 --project torch |
			jq -r ".files[] | select(.url | contains(\"/large/\")) | .filename" | head -1)
		[ -n "$big" ] || exit 91
		"$OFFWHEEL" --home "$D/ws" fetch "${net[@]}" "$big"
		echo "exit=$?"
		echo "tmp=$(find "$D/ws/tmp" -type f -size +0 | wc -l)"
		"$OFFWHEEL" --home "$D/ws" fsck >/dev/null && echo fsck=clean
	'
	echo "$output"
	[[ $output == *"exit=1"* ]]
	[[ $output == *"not enough disk space: this file is 12."*" MB, and $BATS_TEST_TMPDIR/disk/ws/tmp has "*" free — nothing of it was written"* ]]
	[[ $output == *"tmp=0"* ]]
	[[ $output == *"fsck=clean"* ]]
}

@test "sync stops the same way (exit 1, the file's error in JSON); wheels that fit are fetched" {
	run on_small_disk bash -c '
		net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
		"$OFFWHEEL" --home "$D/ws" --json sync --index-url "$OW_HTTPS_URL/whl/large" "${net[@]}" \
			--variant cu128 --project torch --python 3.11 --platform linux-x86_64 --no-deps >"$D/out.json"
		echo "exit=$?"
		jq -r ".fetch.files[] | \"\(.outcome) \(.error // \"\")\"" "$D/out.json"
		# the sample index proper: its wheels are small and fit
		"$OFFWHEEL" --home "$D/ws2" -q sync --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
			--variant cu128 --python 3.12 --platform linux-x86_64 --no-deps
		echo "small=$?"
	'
	echo "$output"
	[[ $output == *"exit=1"* ]]
	[[ $output == *"failed GET "*"torch-2.10.0%2Bcu128-cp311"*": not enough disk space: this file is 12."* ]]
	[[ $output == *"small=0"* ]]
}
