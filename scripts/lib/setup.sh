# scripts/lib/setup.sh - sourced by scripts/test, scripts/offwheel, scripts/demo
# and scripts/bench: installs the Debian packages offwheel needs (only the
# missing ones) and builds it.  Works on a fresh Debian 12 with only git.

OW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Build and run dependencies.
OW_PKGS_BUILD=(build-essential cmake ninja-build pkg-config git
	libcurl4-openssl-dev libssl-dev libarchive-dev libxml2-dev libsqlite3-dev
	libjansson-dev liblz4-dev libzstd-dev dpkg-dev)
# What the tests use: real servers and clients, the stock signature tools.
OW_PKGS_TEST=(libcmocka-dev bats nginx openssl curl python3 python3-venv python3-pip
	clang libclang-rt-14-dev signify-openbsd minisign libxml2-utils unzip xxd jq
	sqlite3 exfat-fuse exfatprogs man-db bsdextrautils python3-packaging lintian
	chromium) # chromium: the fleet page rendered headless (fleet_install.bats)
# What the benchmarks add.
OW_PKGS_BENCH=(hyperfine time)

ow_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

ow_missing_pkgs() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	printf '%s\n' "${missing[@]}"
}

ow_install_pkgs() {
	local missing
	mapfile -t missing < <(ow_missing_pkgs "$@")
	[[ ${#missing[@]} -eq 0 || -z ${missing[0]} ]] && return 0
	ow_log "installing Debian packages: ${missing[*]}"
	local sudo=()
	[[ $(id -u) -ne 0 ]] && sudo=(sudo)
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		{ echo "could not install: ${missing[*]} (run as root or with sudo)" >&2; return 1; }
}

# ow_build DIR [cmake args...]: configure once, then build incrementally.
ow_build() {
	local dir=$1
	shift
	# configured every time (quick when nothing changed), so that the options
	# given here win over an older cache
	cmake -S "$OW_ROOT" -B "$dir" -G Ninja "$@" >/dev/null || return 1
	ninja -C "$dir" >/dev/null || ninja -C "$dir"
}
