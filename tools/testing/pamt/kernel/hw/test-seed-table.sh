#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# seed-table.py against made-up seed-table.bt outputs: the seed's own 5-TD
# figures as "w/o" and its 1-TD figures as "w/", whose table is known;
# then output it must refuse.  Last line: "N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PASSED=0
FAILED=0
check() {	# NAME, then a command that must succeed
	local name=$1

	shift
	if "$@"; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); echo "FAIL: $name"; fi
}

# bpftrace prints every map at exit, in its own order, after its banner.
cat > "$T/wo.out" <<'OUT'
Attaching 5 probes...
^C

@get_max_ns: 1723000
@get_n: 3431000
@get_ns: 55517000000
@put_max_ns: 562000
@put_n: 3431000
@put_ns: 2066000000
OUT
cat > "$T/w.out" <<'OUT'
@put_ns: 137000000
@put_n: 3420000
@put_max_ns: 733000
@get_ns: 334000000
@get_n: 3420000
@get_max_ns: 1386000
OUT
cat > "$T/want" <<'OUT'
               |     avg (us)      |     max (us)      |       #cnt        |    total (us)     |
               |     w/o |      w/ |     w/o |      w/ |     w/o |      w/ |     w/o |      w/ |
tdx_pamt_get() |   16.18 |    0.10 |    1723 |    1386 |   3431k |   3420k |  55517k |    334k |
tdx_pamt_put() |    0.60 |    0.04 |     562 |     733 |   3431k |   3420k |   2066k |    137k |
OUT
"$HERE/seed-table.py" "$T/wo.out" "$T/w.out" > "$T/got" 2>&1
check "two runs give the seed's 5-TD table" diff -u "$T/want" "$T/got"
"$HERE/seed-table.py" "$T/w.out" > "$T/one" 2>&1
check "one run: get row" grep -qE '^tdx_pamt_get\(\) \| +0\.10 \| +1386 \| +3420k \| +334k \|$' "$T/one"

grep -v '@put_n:' "$T/w.out" > "$T/short.out"
check "a missing map is refused" bash -c "! '$HERE/seed-table.py' '$T/short.out' >/dev/null 2>&1"
sed 's/@get_n: .*/@get_n: 0/' "$T/w.out" > "$T/zero.out"
check "a run that timed no get is refused" bash -c "! '$HERE/seed-table.py' '$T/zero.out' >/dev/null 2>&1"
check "the bpftrace program defines every map the table reads" \
	bash -c "for m in get_n get_ns get_max_ns put_n put_ns put_max_ns; do grep -q \"@\$m = \" '$HERE/seed-table.bt' || exit 1; done"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
