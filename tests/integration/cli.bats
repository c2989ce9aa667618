#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# The command line as a newcomer meets it: typos, unknown options, help, the
# workspace path, quiet mode.  No network, no server.

setup() {
	export TMPD=$(mktemp -d)
}

teardown() {
	rm -rf "$TMPD"
}

@test "a mistyped command is answered with the one that was meant" {
	run "$OFFWHEEL" synk
	[ "$status" -eq 2 ]
	[[ "$output" == *"'synk' is not a command; did you mean 'sync'?"* ]]
	run "$OFFWHEEL" fech
	[[ "$output" == *"did you mean 'fetch'?"* ]]
	run "$OFFWHEEL" expor /tmp/x
	[[ "$output" == *"did you mean 'export'?"* ]]
	run "$OFFWHEEL" xyzzy
	[ "$status" -eq 2 ]
	[[ "$output" != *"did you mean"* ]]
}

@test "an unknown option before the command is named, not answered with the whole help" {
	run --separate-stderr "$OFFWHEEL" --bogus ls objects
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--bogus'"* ]]
	[[ "$stderr" != *"commands:"* ]]
	[ -z "$output" ]
	run "$OFFWHEEL" -V
	[ "$status" -eq 0 ]
	[[ "$output" == "offwheel "[0-9]* ]]
	# globals with values, before the command, in both spellings (a reader
	# needs a workspace: a writer makes it)
	"$OFFWHEEL" --home "$TMPD/ws" -q gc
	run "$OFFWHEEL" --home="$TMPD/ws" --json -q ls objects
	[ "$status" -eq 0 ]
	[ "$(jq .count <<<"$output")" -eq 0 ]
	run "$OFFWHEEL" --home "$TMPD/ws" --jobs 2 ls objects
	[ "$status" -eq 0 ]
}

@test "-h after a command is its help, as --help is" {
	for cmd in sync resolve fetch export check audit ls; do
		run "$OFFWHEEL" "$cmd" -h
		[ "$status" -eq 0 ]
		[[ "$output" == "usage: offwheel $cmd"* ]]
	done
	run "$OFFWHEEL" ls
	[ "$status" -eq 2 ]
	[[ "$output" == *"pages, files, sets or objects"* ]]
}

@test "--home=~/DIR means \$HOME/DIR, not a directory named ~" {
	mkdir -p "$TMPD/home" "$TMPD/cwd"
	cd "$TMPD/cwd"
	HOME=$TMPD/home run "$OFFWHEEL" --home=~/ws --json gc
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ -e "$TMPD/home/ws/index.db" ]
	[ ! -e "$TMPD/cwd/~" ]
}


@test "--help of every command: each option of its table is in the synopsis, defaults are named" {
	cmds=$("$OFFWHEEL" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/commands:/ {print $1}')
	[ "$(wc -w <<<"$cmds")" -ge 14 ]
	export COLUMNS=1000 # one line per option: what is checked here is not the wrapping
	for cmd in $cmds; do
		run "$OFFWHEEL" "$cmd" --help
		[ "$status" -eq 0 ] || { echo "$cmd --help: exit $status"; false; }
		synopsis=$(sed -n '1,/^$/p' <<<"$output")
		opts=$(sed -n '/^options:/,/^$/p' <<<"$output" | grep -oE '^ +(-[a-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' || true)
		for o in $opts; do
			grep -qE -- "$o([] =|]|$)" <<<"$synopsis" || { echo "$cmd: $o is not in the synopsis:"; echo "$synopsis"; false; }
		done
		# the global options with a default say it
		for g in --home --jobs --progress --lock-timeout; do
			line=$(grep -E -- "^ +$g " <<<"$output")
			[[ "$line" == *default* || "$line" == *"(600)"* ]] || { echo "$cmd: $g: no default in '$line'"; false; }
		done
	done
	run "$OFFWHEEL" audit --help
	[[ "$(grep -E -- '--scan-data' <<<"$output" | tail -1)" == *"default auto"* ]]
	run "$OFFWHEEL" check --help
	[[ "$(grep -E -- '--at ' <<<"$output")" == *"default now"* ]]
	run "$OFFWHEEL" smoke --help
	[[ "$(grep -E -- '--sample ' <<<"$output")" == *"default 8"* ]]
	run "$OFFWHEEL" ls --help
	[[ "$(grep -E -- '--kind ' <<<"$output")" == *"wheel, metadata or page"* ]]
	run "$OFFWHEEL" ls objects --kind wheels
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kind 'wheels' is not wheel, metadata or page"* ]]
}

@test "every --json command has a schema in docs/json, and a document that differs from it fails with exit 70" {
	# each command name a --json document can carry has its schema file
	mapfile -t cmds < <(grep -ho '"command", "[a-z ]*"' "$OW_SOURCE_DIR"/src/cli/*.c | sed 's/.*, "//; s/"$//' | sort -u)
	# and the ones whose name is not written that way: ls files/pages, crawl
	cmds+=("ls files" "ls pages" "crawl")
	[ "${#cmds[@]}" -ge 15 ]
	for c in "${cmds[@]}"; do
		f=$OW_SOURCE_DIR/docs/json/${c// /_}.schema.json
		[ -f "$f" ] || { echo "no schema for '$c': $f"; false; }
		jq -e '.type == "object" and .additionalProperties == false' "$f" >/dev/null
	done
	# the checker is live: a schema without one of keygen's keys makes keygen exit 70
	d=$BATS_TEST_TMPDIR/schemas
	mkdir -p "$d"
	jq 'del(.properties.key_id) | .required -= ["key_id"]' "$OW_SOURCE_DIR/docs/json/keygen.schema.json" >"$d/keygen.schema.json"
	run env OFFWHEEL_SCHEMA_DIR="$d" "$OFFWHEEL" --json keygen "$BATS_TEST_TMPDIR/k.sec"
	[ "$status" -eq 70 ]
	[[ "$output" == *'key "key_id" is not in the schema'* ]] || { echo "$output"; false; }
	# and a type change too
	jq '.properties.key_id.type = "integer"' "$OW_SOURCE_DIR/docs/json/keygen.schema.json" >"$d/keygen.schema.json"
	run env OFFWHEEL_SCHEMA_DIR="$d" "$OFFWHEEL" --json keygen --force "$BATS_TEST_TMPDIR/k.sec"
	[ "$status" -eq 70 ]
	# with the real schemas it passes
	run env OFFWHEEL_SCHEMA_DIR="$OW_SOURCE_DIR/docs/json" "$OFFWHEEL" --json keygen --force "$BATS_TEST_TMPDIR/k.sec"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a CUDA version given to --variant is a usage error naming the folder meant" {
	for v in cuda12.8 cu12.8 12.8; do
		run --separate-stderr "$OFFWHEEL" --home "$TMPD/h" crawl --variant "$v"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"'$v'"*"did you mean cu128?"* ]]
	done
	run --separate-stderr "$OFFWHEEL" --home "$TMPD/h" crawl --variant cpu,cu126 --cuda 12.9x
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--cuda: '12.9x' is not a CUDA version like 12.8"* ]]
}

@test "--project with a version on torch points to --version" {
	run --separate-stderr "$OFFWHEEL" --home "$TMPD/h" resolve --project torch==2.14.0
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'torch==2.14.0' has a version; use --project torch --version 2.14.0"* ]]
	run --separate-stderr "$OFFWHEEL" --home "$TMPD/h" crawl --project "torch,torchvision>=0.25"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'torchvision>=0.25' has a version"*"--version"* ]]
}

@test "a global option without its value is named in one line, not answered with the whole help" {
	run --separate-stderr "$OFFWHEEL" --home
	[ "$status" -eq 2 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"--home needs a value (the workspace directory"* ]]
	run --separate-stderr "$OFFWHEEL" --jobs
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--jobs needs a value (a number)"* ]]
}

@test "help fits 80 columns (COLUMNS=80, and 80 in a pipe): wrapped at words, most-used options first" {
	cmds=$("$OFFWHEEL" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/commands:/ {print $1}')
	for cols in 80 ""; do
		for cmd in "" $cmds; do
			out=$(COLUMNS=$cols "$OFFWHEEL" $cmd --help)
			long=$(awk 'length($0) > 80' <<<"$out")
			[ -z "$long" ] || { echo "offwheel $cmd --help (COLUMNS=$cols) has lines over 80:"; echo "$long"; false; }
		done
	done
	# no word is cut: every word of an option's help is a word of its one-line form
	wide=$(COLUMNS=1000 "$OFFWHEEL" sync --help | grep -E -- '^ +--platform ')
	narrow=$(COLUMNS=80 "$OFFWHEEL" sync --help | sed -n '/^ \+--platform /,/^ \+-/p' | sed '$d')
	[ "$(tr -s ' \n' '  ' <<<"$narrow" | sed 's/ *$//')" = "$(tr -s ' ' <<<"$wide" | sed 's/ *$//')" ]
	# the options people use first: --python before the rarer --trusted-host
	out=$(COLUMNS=80 "$OFFWHEEL" sync --help | sed -n '/^options:/,$p')
	py=$(grep -n -- '--python ' <<<"$out" | head -1 | cut -d: -f1)
	th=$(grep -n -- '--trusted-host ' <<<"$out" | head -1 | cut -d: -f1)
	[ "$py" -lt "$th" ]
}

@test "offwheel help [CMD]; a mistyped option or command names the one meant; one message form" {
	run "$OFFWHEEL" help sync
	[ "$status" -eq 0 ]
	[ "$output" = "$("$OFFWHEEL" sync --help)" ]
	run "$OFFWHEEL" help
	[ "$status" -eq 0 ]
	[[ $output == *"commands:"* ]]
	run "$OFFWHEEL" help synk
	[ "$status" -eq 2 ]
	[[ $output == *"'synk' is not a command; did you mean 'sync'?"* ]]
	run "$OFFWHEEL" sync --pyton 3.12
	[ "$status" -eq 2 ]
	[ "$output" = "offwheel sync: unknown option '--pyton'; did you mean '--python'? (see 'offwheel sync --help')" ]
	run "$OFFWHEEL" resolve --platfrom=linux-x86_64
	[ "$status" -eq 2 ]
	[[ $output == "offwheel resolve: unknown option '--platfrom=linux-x86_64'; did you mean '--platform'?"* ]]
	# a command's usage error names it once, not twice
	run "$OFFWHEEL" resolve extra
	[ "$status" -eq 2 ]
	[ "$output" = "offwheel resolve: unexpected argument 'extra'" ]
}

@test "--json: a usage or I/O error is one JSON document on stdout, following docs/json/error.schema.json" {
	# OFFWHEEL_SCHEMA_DIR is set by the test suite: a document off its schema exits 70
	[ -n "$OFFWHEEL_SCHEMA_DIR" ]
	run --separate-stderr "$OFFWHEEL" --json sync --pyton 3.12
	[ "$status" -eq 2 ]
	[ "$(jq -r '.command + " " + .error.code + " " + (.error.exit | tostring)' <<<"$output")" = "sync USAGE 2" ]
	[[ $(jq -r .error.message <<<"$output") == *"did you mean '--python'"* ]]
	[[ $stderr == *"did you mean '--python'"* ]]
	run --separate-stderr "$OFFWHEEL" --json --home "$BATS_TEST_TMPDIR/none" ls sets
	[ "$status" -eq 1 ]
	[ "$(jq -r '.command + " " + .error.code + " " + (.error.exit | tostring)' <<<"$output")" = "ls ENOENT 1" ]
	[[ $(jq -r .error.message <<<"$output") == "no workspace at $BATS_TEST_TMPDIR/none"* ]]
	run --separate-stderr "$OFFWHEEL" --json synk
	[ "$status" -eq 2 ]
	[ "$(jq -r '.command + " " + .error.code' <<<"$output")" = "offwheel USAGE" ]
	# exactly one document each time
	[ "$(jq -s length <<<"$output")" -eq 1 ]
}

@test "--variant all: crawl's alone; resolve and sync refuse it before any network, as docs/commands.md says" {
	local cmd
	for cmd in resolve sync; do
		run "$OFFWHEEL" --home "$TMPD/ws" "$cmd" --index-url http://127.0.0.1:9/none --trusted-host 127.0.0.1 --variant all
		[ "$status" -eq 2 ]
		[[ $output == *"$cmd: --variant all is for crawl; name the variants"* ]]
	done
	grep -q '`resolve` and `sync` refuse `all` (exit 2)' "$OW_SOURCE_DIR/docs/commands.md"
}

@test "export on a workspace that does not exist: 'no workspace at DIR', and none is created (a mistyped --home)" {
	run "$OFFWHEEL" --home "$TMPD/nope" export "$TMPD/stick" --all-sets
	[ "$status" -eq 1 ]
	[[ $output == *"no workspace at $TMPD/nope"* ]]
	[ ! -e "$TMPD/nope" ]
	[ ! -e "$TMPD/stick/SHA256SUMS" ]
}
