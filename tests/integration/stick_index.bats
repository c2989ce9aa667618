#!/usr/bin/env bats
# An export served back as an index: a stick holding the cu126 and cu128
# sets of the sample index, served by a real nginx, is one root (simple/)
# with both variants' builds side by side.  Read with --variant cu126,cu128,
# each variant's set comes back identical (same files, same hashes); a torch
# taken by --version keeps its own local label in torchvision/torchaudio.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV"
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$SRV/ws" -q sync --index-url "$OW_HTTPS_URL/whl" "${net[@]}" \
		--variant cu126,cu128 --python 3.12 --platform linux-x86_64
	"$OFFWHEEL" --home "$SRV/ws" --json ls sets -v >"$SRV/sets.json"
	"$OFFWHEEL" keygen "$SRV/k.sec" >/dev/null
	"$OFFWHEEL" --home "$SRV/ws" -q export "$SRV/stick" --all-sets --sign "$SRV/k.sec"
	ow_stop_nginx
	# the stick alone, as a lab serves it
	ow_start_nginx "$SRV/stick"
	export OW_HTTP_URL OW_NGINX_DIR OW_NGINX_LOG
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# members TARGET FILE: "filename sha256" of a target's members, sorted
orig_members() {
	jq -r --arg t "$1" '.sets[] | select(.target == $t) | .members[] | "\(.filename) \(.sha256)"' \
		"$SRV/sets.json" | sort
}
got_members() {
	jq -r --arg t "$1" '.targets[] | select(.target == $t) | .members[] | "\(.filename) \(.sha256)"' \
		"$2" | sort
}

@test "the stick's two variants read back by --variant: each set identical to the one exported" {
	[ "$(jq '.sets | length' "$SRV/sets.json")" -eq 2 ]
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json resolve \
		--index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 --variant cu126,cu128 \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	local v t
	for v in cu126 cu128; do
		t="$v cp312-manylinux_2_28_x86_64"
		[ "$(jq -r --arg t "$t" '.targets[] | select(.target == $t) | .variant_from' "$BATS_TEST_TMPDIR/r.json")" = local-version ]
		diff <(orig_members "$t") <(got_members "$t" "$BATS_TEST_TMPDIR/r.json")
		# and no member of the other variant's build
		! got_members "$t" "$BATS_TEST_TMPDIR/r.json" | grep -v "+$v" | grep -E '\+cu[0-9]+'
	done
	[ "$(orig_members "cu126 cp312-manylinux_2_28_x86_64" | wc -l)" -gt 10 ]
}

@test "sync from the served stick stores both sets; a variant the stick lacks names the labels it has" {
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" sync \
		--index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 --variant cu126,cu128,cu130 \
		--python 3.12 --platform linux-x86_64
	echo "$output $stderr"
	[ "$status" -eq 4 ]
	[[ $output == *"cu130: no such variant on this index"*"(their labels: +cu126, +cu128)"* ]]
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json ls sets -v
	[ "$(jq '[.sets[] | select(.fetched)] | length' <<<"$output")" -eq 2 ]
	local t
	for t in "cu126 cp312-manylinux_2_28_x86_64" "cu128 cp312-manylinux_2_28_x86_64"; do
		diff <(orig_members "$t") <(jq -r --arg t "$t" '.sets[] | select(.target == $t) | .members[] | "\(.filename) \(.sha256)"' <<<"$output" | sort)
	done
}

@test "pairing keeps torch's local label: --version 2.10.0+cu126 gets the +cu126 torchvision and torchaudio" {
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json resolve \
		--index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 --version 2.10.0+cu126 \
		--python 3.12 --platform linux-x86_64 --no-deps
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	[ "$(jq -r '.targets[0].members[] | select(.role != "dep") | .version' <<<"$output" | sort | tr '\n' ' ')" = \
		"0.25.0+cu126 2.10.0+cu126 2.10.0+cu126 " ]
	# without --variant the one root is read as before: the newest torch names the target
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json resolve \
		--index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 --python 3.12 \
		--platform linux-x86_64 --no-deps
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	[ "$(jq -r '.targets[0].target' <<<"$output")" = "cu128 cp312-manylinux_2_28_x86_64" ]
	[ "$(jq -r '.targets[0].members[] | .version' <<<"$output" | sort | tr '\n' ' ')" = \
		"0.25.0+cu128 2.10.0+cu128 2.10.0+cu128 " ]
}
