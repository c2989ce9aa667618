#!/usr/bin/env bats
# What packagers and users get: `cmake --install` (the binary, offwheel(1),
# the bash completion, the README), and the Debian package `cpack -G DEB`
# makes, which the lab's targets install with `apt install ./offwheel_*.deb`.
# The man page and the completion are made from the binary's --help
# (scripts/gen-docs), and checked here against it: every command and every
# option of every command is in both.

setup_file() {
	export PFX="$BATS_FILE_TMPDIR/prefix"
	cmake --install "$OW_BUILD_DIR" --prefix "$PFX" >/dev/null
}

commands() { "$OFFWHEEL" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && !/^  / { exit }'; }
options_of() { "$OFFWHEEL" "$1" --help | sed -n '/^options:/,/^global options:/p' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

@test "cmake --install: the binary, the man page, the completion and the README" {
	[ -x "$PFX/bin/offwheel" ]
	run "$PFX/bin/offwheel" --version
	[ "$status" -eq 0 ]
	[[ $output == "offwheel "* ]]
	[ -f "$PFX/share/man/man1/offwheel.1" ]
	[ -f "$PFX/share/bash-completion/completions/offwheel" ]
	[ -f "$PFX/share/doc/offwheel/README.md" ]
}

@test "offwheel(1) names every command, every option of each, the exit codes, and renders" {
	page=$(MANWIDTH=200 man -l "$PFX/share/man/man1/offwheel.1" 2>/dev/null | col -b)
	[[ $page == *"EXIT STATUS"* && $page == *"verification failed"* && $page == *"OFFWHEEL_HOME"* ]]
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
}

@test "cpack makes a .deb: offwheel, its page and completion, the right dependencies; apt accepts it" {
	command -v dpkg-deb >/dev/null || skip "no dpkg-deb on this machine"
	out=$BATS_TEST_TMPDIR/pkg
	cpack -G DEB -B "$out" --config "$OW_BUILD_DIR/CPackConfig.cmake" >/dev/null
	deb=$(ls "$out"/offwheel_*.deb)
	[ -f "$deb" ]
	run dpkg-deb -c "$deb"
	[[ $output == *"./usr/bin/offwheel"* && $output == *"./usr/share/man/man1/offwheel.1"* ]]
	[[ $output == *"./usr/share/bash-completion/completions/offwheel"* ]]
	run dpkg-deb -f "$deb" Depends
	for lib in libarchive13 libsqlite3-0 libssl3 libxml2 libjansson4 libzstd1 liblz4-1; do
		[[ $output == *"$lib"* ]] || { echo "Depends lacks $lib: $output"; false; }
	done
	[ "$(dpkg-deb -f "$deb" Recommends)" = libcurl4 ]
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
