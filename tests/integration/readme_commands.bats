#!/usr/bin/env bats
# Every `offwheel ...` command in the code blocks of README.md and docs/*.md
# runs as written (tests/tools/readme_commands.py reads them out), in the
# order the pages give them, in one workspace: the sample index served by
# `scripts/demo --serve` (nginx over HTTPS; it plays download.pytorch.org
# and PyPI), HOME a temporary directory, and the stand-in driver for smoke
# and doctor.  What the pages name and the test cannot have is rewritten:
# /media/usb, /srv/wheels and /etc/nginx become directories under the test's
# own.  A command naming a host the test has not (a lab's mirror, an object
# store) still runs, with every host but loopback unreachable (a proxy that
# refuses), and must not be a usage error (exit 2): its options parse.
# A command that fails on purpose is in ALLOWED below, with why.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

# "COMMAND AS WRITTEN" -> "EXIT STATUSES|why"
declare -gA ALLOWED=(
	["offwheel smoke --python python3"]="1|the test's python3 has no torch installed: smoke says so"
	["offwheel doctor"]="1|the test's python3 has no torch installed: doctor says so, and the fix"
	["offwheel audit --device 12.0 torch-2.10.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"]="3|the page shows a cu126 torch that cannot run on 12.0: exit 3 is its point"
)

setup_file() {
	export T=$(mktemp -d)
	export OFFWHEEL_DEMO_DIR=$T/serve OFFWHEEL_DEMO_BIN=$(dirname "$OFFWHEEL")
	"$OW_SOURCE_DIR/scripts/demo" --serve >"$T/env.sh" 2>"$T/serve.log" ||
		{ cat "$T/serve.log"; return 1; }
	mkdir -p "$T/home" "$T/work" "$T/media/usb" "$T/srv/wheels" "$T/etc/nginx/conf.d"
	# what the pages' commands take from the directory they run in
	printf 'torch\n' >"$T/work/requirements.txt"
	printf 'numpy<3\n' >"$T/work/constraints.txt"
	# a folder of wheels (pip's --find-links): the sample's stable cu128 set
	find "$T/serve/index/www/whl" "$T/serve/index/www2/whl" -maxdepth 3 -name '*.whl' \
		\( -path '*/cu128/*' -o ! -name 'torch*' \) ! -path '*/nightly/*' ! -path '*/test/*' \
		-exec cp {} "$T/srv/wheels/" \; 2>/dev/null || true
	# the wheel docs/gpu.md audits, in the directory it is named in
	find "$T/serve/index" -name 'torch-2.10.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl' \
		-exec cp {} "$T/work/" \; -quit
}

teardown_file() {
	"$OW_SOURCE_DIR/scripts/demo" --stop >/dev/null 2>&1 || true
	rm -rf "$T"
}

# run_pages FILE.md...: run every command of the pages (in the workspace $WS
# when set, else the served one); each failure is one line on stdout
# ("FILE:LINE: exit N: COMMAND"); the status is their count.
run_pages() {
	local sample mode at orig cmd rc fails=0 want
	sample=$(source "$T/env.sh" && echo "${OFFWHEEL_PYTORCH_URL%/whl}")
	[ -n "$sample" ]
	while IFS=$'\t' read -r mode at orig cmd; do
		rc=0
		(cd "$T/work" && env -u XDG_CACHE_HOME -u OFFWHEEL_HOME HOME="$T/home" \
			ALL_PROXY=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9 \
			NO_PROXY=localhost,127.0.0.1 no_proxy=localhost,127.0.0.1 \
			AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=secrettest \
			timeout 300 bash -c "source '$T/env.sh'; ${WS:+export OFFWHEEL_HOME='$WS';} $cmd" \
			</dev/null >"$T/out" 2>&1) || rc=$?
		echo "# $at [$mode] exit $rc: $cmd" >&2
		want=${ALLOWED[$orig]:-}
		if [ -n "$want" ] && [[ ",${want%%|*}," == *",$rc,"* ]]; then
			continue
		elif [ "$mode" = run ] && [ "$rc" -eq 0 ]; then
			continue
		elif [ "$mode" = parse ] && [ "$rc" -ne 2 ] && [ "$rc" -ne 124 ]; then
			continue
		fi
		fails=$((fails + 1))
		echo "$at: exit $rc: $orig"
		sed 's/^/    /' "$T/out" | tail -5
	done < <(python3 "$OW_SOURCE_DIR/tests/tools/readme_commands.py" --sample "$sample" \
		--tmp "$T" "$@")
	return "$fails"
}

@test "every offwheel command of README.md and docs/*.md runs as written" {
	cd "$OW_SOURCE_DIR"
	n=$(python3 tests/tools/readme_commands.py --sample x --tmp x README.md docs/*.md | wc -l)
	echo "# $n commands" >&2
	[ "$n" -ge 20 ]
	# README.md top to bottom, as a reader runs it, in one workspace
	run run_pages README.md
	echo "$output"
	readme=$status
	# each page of docs/ on its own: a workspace holding the README's main
	# job (its first sync) and nothing a page before it added
	sync=$(python3 tests/tools/readme_commands.py --sample x --tmp x README.md |
		awk -F'\t' '$3 ~ /^(scripts\/)?offwheel sync --channel/ { print $3; exit }')
	[ -n "$sync" ]
	printf '```sh\n%s\n```\n' "$sync" >"$T/main-job.md"
	WS=$T/ws-main run_pages "$T/main-job.md"
	docs=0
	for page in docs/*.md; do
		rm -rf "$T/ws-page" && cp -a "$T/ws-main" "$T/ws-page"
		WS=$T/ws-page run run_pages "$page"
		[ -z "$output" ] || echo "$output"
		docs=$((docs + status))
	done
	[ "$readme" -eq 0 ]
	[ "$docs" -eq 0 ]
	# and they did the job: sets, a signed stick that checks
	run "$OFFWHEEL" --home "$T/serve/workspace" --json ls sets
	[ "$(jq .count <<<"$output")" -ge 4 ]
	(cd "$T/media/usb/torch" && sha256sum -c --quiet SHA256SUMS)
}

@test "the test finds a README command that fails as written (80173c3^: export with nothing named)" {
	cd "$OW_SOURCE_DIR"
	git cat-file -e 80173c3^:README.md 2>/dev/null || skip "no git history here to read the old README from"
	mkdir -p "$T/old"
	git show 80173c3^:README.md >"$T/old/README.md"
	# the commands the old README had and the current one has not
	python3 tests/tools/readme_commands.py --sample x --tmp x README.md | cut -f3 | sort >"$T/now"
	python3 - "$T/old/README.md" "$T/now" <<-'PY' >"$T/old/only.md"
		import subprocess, sys
		recs = subprocess.run([sys.executable, "tests/tools/readme_commands.py", "--sample", "x",
		                       "--tmp", "x", sys.argv[1]], capture_output=True, text=True).stdout
		now = set(open(sys.argv[2]).read().splitlines())
		print("```sh")
		for r in recs.splitlines():
		    cmd = r.split("\t")[2]
		    if cmd not in now:
		        print(cmd)
		print("```")
	PY
	grep -qx 'offwheel export /media/usb --sign lab.sec' "$T/old/only.md"
	run run_pages "$T/old/only.md"
	echo "$output"
	[ "$status" -ge 1 ]
	[[ $output == *"exit 2: offwheel export /media/usb --sign lab.sec"* ]]
}
