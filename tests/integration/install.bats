#!/usr/bin/env bats
# What packagers and users get: `cmake --install` (the binary, offwheel(1),
# the bash completion, the README and docs/), and the Debian package `cpack -G
# DEB` makes, which the lab's targets install with `apt install
# ./offwheel_*.deb`, and which Debian's own checker, lintian, accepts.
# The man page and the completion are made from the binary's --help
# (scripts/gen-docs), and checked here against it: every command and every
# option of every command is in both.

setup_file() {
	export PFX="$BATS_FILE_TMPDIR/prefix"
	cmake --install "$OW_BUILD_DIR" --prefix "$PFX" >/dev/null
}

commands() { "$OFFWHEEL" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && !/^  / { exit }'; }
options_of() { "$OFFWHEEL" "$1" --help | sed -n '/^options:/,/^global options:/p' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

@test "cmake --install: the binary, the man page, the completion, the README and docs" {
	[ -x "$PFX/bin/offwheel" ]
	run "$PFX/bin/offwheel" --version
	[ "$status" -eq 0 ]
	[[ $output == "offwheel "* ]]
	# gzipped, as Debian wants it, with no timestamp in the header
	[ -f "$PFX/share/man/man1/offwheel.1.gz" ]
	gzip -t "$PFX/share/man/man1/offwheel.1.gz"
	[ -f "$PFX/share/bash-completion/completions/offwheel" ]
	[ -f "$PFX/share/doc/offwheel/README.md" ]
	[ -f "$PFX/share/doc/offwheel/copyright" ]
	# every page the README links to is installed beside it
	for page in $(grep -o '](docs/[a-z-]*\.md)' "$OW_SOURCE_DIR/README.md" | sed 's/^](//; s/)$//' | sort -u); do
		[ -f "$PFX/share/doc/offwheel/$page" ] || { echo "not installed: $page"; false; }
	done
	[ -f "$PFX/share/doc/offwheel/docs/json/sync.schema.json" ]
}

@test "offwheel(1) names every command, every option of each, the exit codes, and renders" {
	page=$(MANWIDTH=200 man -l "$PFX/share/man/man1/offwheel.1.gz" 2>/dev/null | col -b)
	[[ $page == *"EXIT STATUS"* && $page == *"verification failed"* && $page == *"OFFWHEEL_HOME"* ]]
	# every exit status and setting --help names, and examples to start from
	[[ $page == *"143"*"terminated (SIGTERM)"* && $page == *"OFFWHEEL_PYTORCH_URL"* ]]
	grep -q '^EXAMPLES$' <<<"$page"
	grep -q '^[[:space:]]*offwheel sync --channel stable' <<<"$page"
	mapfile -t cmds < <(commands)
	[ "${#cmds[@]}" -ge 14 ]
	for c in "${cmds[@]}"; do
		grep -q "^   $c\$" <<<"$page" || { echo "no section for $c"; false; }
		# the options in the command's section of the page
		section=$(awk -v c="$c" '$0 == "   " c { f = 1; next } f && /^   [a-z]+$/ { exit } f' <<<"$page")
		while read -r o; do
			grep -q -- "$o" <<<"$section" || { echo "$c: $o missing from the man page"; false; }
		done < <(options_of "$c")
	done
}

@test "the bash completion completes commands, and each command's options" {
	comp="$PFX/share/bash-completion/completions/offwheel"
	complete_line() { # WORD... : the completions of the last word
		bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _offwheel; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
	}
	[ "$(complete_line offwheel syn)" = sync ]
	[[ $(complete_line offwheel --json ex) == export ]]
	mapfile -t cmds < <(commands)
	for c in "${cmds[@]}"; do
		got=$(complete_line offwheel "$c" --)
		while read -r o; do
			grep -qx -- "$o" <<<"$got" || { echo "$c: $o not completed"; false; }
		done < <(options_of "$c")
		grep -qx -- --home <<<"$got" # and the global ones
	done
	[[ $(complete_line offwheel ls f) == *files* ]]
	# after global options, their values are not taken for the command
	[ "$(complete_line offwheel --home /x sy)" = sync ]
	[ "$(complete_line offwheel --jobs 4 --json sy)" = sync ]
	# the values of the options that have a fixed set of them, in lists too
	[ "$(complete_line offwheel sync --channel st)" = stable ]
	[ "$(complete_line offwheel --home /x sync --variant cu12 | sort | tr '\n' ' ')" = "cu126 cu128 " ]
	[ "$(complete_line offwheel sync --variant cu126,cu13)" = cu126,cu130 ]
	[[ $(complete_line offwheel resolve --platform win) == windows-x86_64 ]]
	[[ $(complete_line offwheel resolve --python 3.1) == *3.12* ]]
}

@test "cpack makes a .deb: offwheel, its page and completion, the right dependencies; apt accepts it" {
	command -v dpkg-deb >/dev/null || skip "no dpkg-deb on this machine"
	out=$BATS_TEST_TMPDIR/pkg
	cpack -G DEB -B "$out" --config "$OW_BUILD_DIR/CPackConfig.cmake" >/dev/null
	deb=$(ls "$out"/offwheel_*.deb)
	[ -f "$deb" ]
	run dpkg-deb -c "$deb"
	[[ $output == *"./usr/bin/offwheel"* && $output == *"./usr/share/man/man1/offwheel.1.gz"* ]]
	[[ $output == *"./usr/share/doc/offwheel/copyright"* && $output == *"./usr/share/doc/offwheel/changelog.gz"* ]]
	[[ $output == *"./usr/share/bash-completion/completions/offwheel"* ]]
	run dpkg-deb -f "$deb" Depends
	for lib in libarchive13 libsqlite3-0 libssl3 libxml2 libjansson4 libzstd1 liblz4-1; do
		[[ $output == *"$lib"* ]] || { echo "Depends lacks $lib: $output"; false; }
	done
	# libcurl is loaded at run time; the completion needs bash-completion
	[ "$(dpkg-deb -f "$deb" Recommends)" = "libcurl4, bash-completion" ]
	dpkg -x "$deb" "$BATS_TEST_TMPDIR/x"
	run "$BATS_TEST_TMPDIR/x/usr/bin/offwheel" --version
	[ "$status" -eq 0 ]
	# what `apt install ./offwheel_*.deb` would do, simulated (changes nothing)
	if command -v apt-get >/dev/null; then
		run apt-get install -s "$deb"
		[ "$status" -eq 0 ] || { echo "$output"; false; }
		[[ $output == *"Inst offwheel"* ]]
	fi
}

@test "lintian, Debian's package checker, finds no error in the .deb" {
	command -v lintian >/dev/null || skip "lintian is not installed (scripts/test installs it: apt-get install lintian)"
	out=$BATS_TEST_TMPDIR/pkg
	cpack -G DEB -B "$out" --config "$OW_BUILD_DIR/CPackConfig.cmake" >/dev/null
	deb=$(ls "$out"/offwheel_*.deb)
	run lintian --allow-root "$deb"
	echo "$output"
	# lintian exits 2 on an error tag; print every tag it gave, fail on E:
	! grep -q '^E: ' <<<"$output"
	[ "$status" -eq 0 ]
}
