#!/usr/bin/env bash
# Ensure what `make test` needs beyond Go is on this machine: the PostgreSQL
# server binaries (the tests start their own cluster) and Chromium (the River
# UI is checked in a headless browser). Installs only what is missing, and
# only when it can (root and apt-get); otherwise prints one line saying what
# to install and fails. `make test` and `.ci/run` both run it.
#
# Optional: promtool, with which `make verify` checks and unit-tests the
# alerting rules in alerts/ (it skips them without). As root it is extracted
# from Debian's prometheus package into /usr/local/bin, the package itself
# never installed: its postinst would start and enable a Prometheus server.
# A missing promtool that cannot be fetched is one line, never a failure.
#
#   scripts/test-deps.sh          install what is missing (when possible)
#   scripts/test-deps.sh --check  only say what is missing
set -uo pipefail

check_only=0
[ "${1:-}" = "--check" ] && check_only=1
# Overridable so the script's own test can run it against a stub.
CHROMIUM=${CHROMIUM:-chromium}
APT_GET=${APT_GET:-apt-get}
PROMTOOL=${PROMTOOL:-promtool}
PROMTOOL_DIR=${PROMTOOL_DIR:-/usr/local/bin}

need=()
have_postgres() {
	[ -n "${DATABASE_URL:-}" ] && return 0 # tests use that server instead
	[ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ] && return 0
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && return 0
	command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir 2>/dev/null)/initdb" ]
}
have_postgres || need+=(postgresql)
command -v "$CHROMIUM" >/dev/null 2>&1 || need+=(chromium)

have_promtool=1
command -v "$PROMTOOL" >/dev/null 2>&1 || have_promtool=0

[ ${#need[@]} -eq 0 ] && [ "$have_promtool" = 1 ] && exit 0

root=1
if [ "${TEST_DEPS_UID:-$(id -u)}" != 0 ] || ! command -v "$APT_GET" >/dev/null 2>&1; then
	root=0
fi
if [ "$have_promtool" = 0 ] && { [ "$check_only" = 1 ] || [ "$root" = 0 ]; }; then
	echo "test-deps: promtool missing, so make verify skips the alerting rules: put one on PATH, or run scripts/test-deps.sh as root (it extracts Debian's prometheus package's promtool)" >&2
fi
if [ ${#need[@]} -gt 0 ]; then
	if [ "$check_only" = 1 ]; then
		echo "test-deps: missing ${need[*]}: install with: apt-get install ${need[*]}" >&2
		exit 1
	fi
	if [ "$root" = 0 ]; then
		echo "test-deps: missing ${need[*]} and cannot install here (needs root and apt-get): run: sudo apt-get install ${need[*]}" >&2
		exit 1
	fi
	echo "test-deps: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! { "$APT_GET" update -q >/dev/null && "$APT_GET" install -y -q --no-install-recommends "${need[@]}" >/dev/null; }; then
		echo "test-deps: apt-get install ${need[*]} failed: install them by hand" >&2
		exit 1
	fi
fi
if [ "$have_promtool" = 1 ] || [ "$check_only" = 1 ] || [ "$root" = 0 ]; then
	exit 0
fi

# promtool alone (48 MB) out of the package (19 MB download): apt-get
# download and dpkg-deb -x run no maintainer script, so no server starts.
echo "test-deps: extracting promtool from Debian's prometheus package into $PROMTOOL_DIR" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt-get downloads as its _apt user
fetch() { (cd "$tmp" && "$APT_GET" download -q prometheus >/dev/null 2>&1); }
if ! { { fetch || { "$APT_GET" update -q >/dev/null && fetch; }; } &&
	dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root" &&
	install -m 755 "$tmp/root/usr/bin/promtool" "$PROMTOOL_DIR/promtool"; }; then
	echo "test-deps: could not extract promtool (apt-get download prometheus, dpkg-deb -x): make verify skips the alerting rules" >&2
fi
exit 0
