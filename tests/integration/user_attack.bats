#!/usr/bin/env bats
# A hostile or careless user at the command line, with no server at all: a
# local (file://) index whose page is a FIFO or whose wheel is a link to
# /dev/zero, a FIFO given to audit or as check's state file, an empty
# --home, an interpreter that never answers, a store that cannot be
# reached.  Each must end promptly with a message that names the thing, and
# leave nothing behind.  Everything runs under `timeout`: a hang is a
# failure, not a stuck test.

bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	WS=$T/ws
	mkdir -p "$WS"
}

ow() { timeout 30 "$OFFWHEEL" --home "$WS" "$@"; }

WHEEL=torch-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl

# a one-project local index: simple/torch/index.html links ../../pk/$WHEEL
local_index() {
	mkdir -p "$T/idx/simple/torch" "$T/idx/pk"
	cat >"$T/idx/simple/torch/index.html" <<EOF
<!DOCTYPE html>
<html><body>
<a href="../../pk/$WHEEL">$WHEEL</a><br/>
</body></html>
EOF
}

no_partials() {
	local left
	left=$(find "$WS/tmp" -name 'part-*' 2>/dev/null)
	[ -z "$left" ] || { echo "left behind: $left"; ls -la "$WS/tmp"; false; }
}

@test "crawl: a file:// index whose page is a FIFO fails that page at once, naming it, and frees the workspace" {
	mkdir -p "$T/idx/simple/torch"
	mkfifo "$T/idx/simple/torch/index.html"
	run ow crawl --index-url "file://$T/idx/simple" --variant all --project torch
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"$T/idx/simple/torch/index.html is a FIFO, not a regular file"* ]]
	# the lock is free: the next command does not wait
	run ow ls pages
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "fetch and resolve: a file:// wheel that is a link to /dev/zero is refused before a byte is copied" {
	local_index
	ln -s /dev/zero "$T/idx/pk/$WHEEL"
	ow -q crawl --index-url "file://$T/idx/simple" --variant all --project torch
	# at most 50 MB may be written: more (the old behaviour) kills the run
	run bash -c 'ulimit -f 102400; "$@"' _ timeout 30 "$OFFWHEEL" --home "$WS" fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"$T/idx/pk/$WHEEL is a device, not a regular file"* ]]
	no_partials
	run bash -c 'ulimit -f 102400; "$@"' _ timeout 30 "$OFFWHEEL" --home "$WS" resolve \
		--index-url "file://$T/idx/simple" --project torch --python 3.12 --platform linux-x86_64 --no-deps
	echo "$output"
	[ "$status" -eq 4 ] # incomplete: the only wheel cannot be read
	no_partials
}

@test "fetch: a file:// wheel over --max-size is refused before it is copied: no tmp/part-* left" {
	local_index
	head -c 3000000 /dev/urandom >"$T/idx/pk/$WHEEL"
	ow -q crawl --index-url "file://$T/idx/simple" --variant all --project torch
	run ow fetch --max-size 1 "$WHEEL"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"$T/idx/pk/$WHEEL has 3000000 bytes, over the size cap of 1048576"* ]]
	no_partials
}

@test "audit: a FIFO is refused at once, naming it" {
	mkfifo "$T/lib.so"
	run timeout 20 "$OFFWHEEL" audit "$T/lib.so"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"$T/lib.so is a FIFO, not a regular file"* ]]
}

@test "--cert FIFO: refused at once (exit 2), naming it, never handed to OpenSSL to wait on" {
	mkfifo "$T/ca.pem"
	run -2 ow crawl --index-url https://127.0.0.1:9/simple --cert "$T/ca.pem" --project torch
	[[ $output == *"CA file $T/ca.pem is a FIFO, not a regular file"* ]] || { echo "$output"; false; }
}

@test "--home '': a usage error that says it is empty, not 'path too long'" {
	for cmd in "ls files" "crawl --index-url file:///nowhere --project torch" "fsck"; do
		run -2 timeout 20 "$OFFWHEEL" --home '' $cmd
		[[ $output == *"--home: empty — give the workspace directory"* ]] || { echo "$cmd: $output"; false; }
		[[ $output != *"too long"* ]]
	done
	run -2 timeout 20 "$OFFWHEEL" --home= ls files
}

# an interpreter that never answers, with a child of its own
slow_python() {
	printf '#!/bin/sh\nsleep 86399\n' >"$T/slowpy"
	chmod +x "$T/slowpy"
}

@test "doctor and smoke --python: an interpreter that never answers is given up after the timeout, named" {
	slow_python
	for cmd in doctor smoke; do
		SECONDS=0
		run env OFFWHEEL_PYTHON_TIMEOUT=2 timeout 30 "$OFFWHEEL" $cmd --python "$T/slowpy"
		echo "$cmd ($SECONDS s, exit $status): $output"
		[ "$status" -ne 124 ] && [ "$SECONDS" -lt 20 ]
		[[ $output == *"$T/slowpy: no answer within 2 s"* ]]
	done
	# the interpreter and its child were killed with it
	! pgrep -f 'sleep 86399'
	# the default is documented where --python is
	grep -q "answer within 60 s" "$OW_SOURCE_DIR/docs/gpu.md"
}

@test "check s3:// and http:// of a store that cannot be reached: exit 1 (an error), naming it" {
	"$OFFWHEEL" keygen "$T/k.sec" >/dev/null
	run env AWS_ACCESS_KEY_ID=AKX AWS_SECRET_ACCESS_KEY=SKX timeout 60 "$OFFWHEEL" check s3://lab/x \
		--endpoint http://127.0.0.1:9 --pubkey "$T/k.pub" --state "$T/state.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"s3://lab/x/SHA256SUMS.sig"*"127.0.0.1"*"check --endpoint and that the store is up"* ]]
	run timeout 60 "$OFFWHEEL" check http://127.0.0.1:9/lab/x --pubkey "$T/k.pub" --state "$T/state.json"
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "over-long arguments: the message keeps its end (the cause), marks what it left out, and nothing is cut silently" {
	long=$(printf 'a%.0s' $(seq 5000))
	# a 5000-byte workspace path: "path too long" survives at the end
	run -1 timeout 20 "$OFFWHEEL" --home "$T/$long" ls objects
	[[ ${lines[-1]} == *": path too long" ]] || { echo "${output: -300}"; false; }
	[[ $output == *" bytes left out ...] "* ]]
	[ "${#output}" -lt 2200 ]
	# a 5000-byte index URL: the usage error still says what is wrong with it
	run -2 timeout 20 "$OFFWHEEL" --home "$WS" crawl --index-url "http://127.0.0.1:1/$long"
	[[ $output == *"' is too long"* ]] || { echo "${output: -300}"; false; }
	[[ $output == *" bytes left out ...] "* ]]
	# a requirement file line of 100 kB is named by its file and line
	printf 'torch==%s\n' "$(printf '1%.0s' $(seq 100000))" >"$T/req.txt"
	run timeout 20 "$OFFWHEEL" --home "$WS" resolve --offline -r "$T/req.txt"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	[[ $output == *"req.txt:1: requirement 'torch==111"*"longer than 4096 characters"* ]] || { echo "${output:0:300}"; false; }
	[ "${#output}" -lt 4000 ]
	# a 100-byte --variant: refused (before, crawl stored it cut to 63 bytes)
	for cmd in crawl resolve sync; do
		run -2 timeout 20 "$OFFWHEEL" --home "$WS" "$cmd" --index-url "file://$T/none" \
			--variant "cu128,${long:0:100}" --project torch
		[[ $output == *"--variant: 'aaa"*"is 100 bytes, longer than the 63 an index folder name may be"* ]] || { echo "$cmd: $output"; false; }
	done
	[ ! -e "$WS/index.db" ] || [ "$("$OFFWHEEL" --home "$WS" --json ls pages | jq '.pages | length')" -eq 0 ]
}

@test "audit of a missing path says the file is missing, not that the workspace is" {
	for p in "$T/none.so" "./none.whl" "$T/$(printf 'b%.0s' $(seq 3000)).so"; do
		run -1 timeout 20 "$OFFWHEEL" --home "$T/no-ws" audit "$p"
		[[ $output == *"No such file or directory"* || $output == *"too long"* ]] || { echo "$p: ${output: -300}"; false; }
		[[ $output != *"no workspace"* ]] || { echo "$p: $output"; false; }
	done
	# a name without a '/' is still a stored object's name: the workspace is asked
	run -1 timeout 20 "$OFFWHEEL" --home "$T/no-ws" audit torch-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl
	[[ $output == *"no workspace"* ]]
}
