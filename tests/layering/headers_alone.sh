#!/bin/sh
# Every public header compiles on its own, twice in a row (its include
# guard), as strict C17 with no feature macros (-std=c17 -pedantic, no
# _GNU_SOURCE): a user of include/offwheel/ needs nothing else first.
# usage: headers_alone.sh SOURCE_DIR [CC]
set -eu
src=$1 cc=${2:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0 n=0
for h in "$src"/include/offwheel/*.h; do
	name=$(basename "$h")
	printf '#include "offwheel/%s"\n#include "offwheel/%s"\nint main(void) { return 0; }\n' \
		"$name" "$name" >"$tmp/t.c"
	n=$((n + 1))
	if ! "$cc" -std=c17 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$src/include" "$tmp/t.c" \
		>"$tmp/err" 2>&1; then
		echo "offwheel/$name does not compile alone:"
		sed 's/^/  /' "$tmp/err"
		bad=$((bad + 1))
	fi
done
echo "$n public headers compiled alone, $bad failed"
[ "$bad" -eq 0 ]
