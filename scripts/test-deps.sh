#!/usr/bin/env bash
# Ensure what `make test` needs beyond Go is on this machine: the PostgreSQL
# server binaries (the tests start their own cluster) and Chromium (the River
# UI is checked in a headless browser). Installs only what is missing, and
# only when it can (root and apt-get); otherwise prints one line saying what
# to install and fails. `make test` and `.ci/run` both run it.
#
#   scripts/test-deps.sh          install what is missing (when possible)
#   scripts/test-deps.sh --check  only say what is missing
set -uo pipefail

check_only=0
[ "${1:-}" = "--check" ] && check_only=1
# Overridable so the script's own test can run it against a stub.
CHROMIUM=${CHROMIUM:-chromium}
APT_GET=${APT_GET:-apt-get}

need=()
have_postgres() {
	[ -n "${DATABASE_URL:-}" ] && return 0 # tests use that server instead
	[ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ] && return 0
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && return 0
	command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir 2>/dev/null)/initdb" ]
}
have_postgres || need+=(postgresql)
command -v "$CHROMIUM" >/dev/null 2>&1 || need+=(chromium)

[ ${#need[@]} -eq 0 ] && exit 0

if [ "$check_only" = 1 ]; then
	echo "test-deps: missing ${need[*]}: install with: apt-get install ${need[*]}" >&2
	exit 1
fi
if [ "${TEST_DEPS_UID:-$(id -u)}" != 0 ] || ! command -v "$APT_GET" >/dev/null 2>&1; then
	echo "test-deps: missing ${need[*]} and cannot install here (needs root and apt-get): run: sudo apt-get install ${need[*]}" >&2
	exit 1
fi
echo "test-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { "$APT_GET" update -q >/dev/null && "$APT_GET" install -y -q --no-install-recommends "${need[@]}" >/dev/null; }; then
	echo "test-deps: apt-get install ${need[*]} failed: install them by hand" >&2
	exit 1
fi
