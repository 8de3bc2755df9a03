#!/bin/sh
# test_probe.sh - integration test of libmbprobe.so (contract: allocators/probe.h):
# preloads it behind every installed allocator, sets one option through the
# environment and checks family, malloc_so, version, the read-back value and
# both terminators.  Usage: test_probe.sh <path-to-libmbprobe.so>; 77 = skipped.
set -u

probe=${1:-}
if [ -z "$probe" ] || [ ! -e "$probe" ]; then
	echo "SKIP: probe library '$probe' not found" >&2
	exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
ran=0

fail() { echo "FAIL [$name]: $*" >&2; fails=$((fails + 1)); }

# find_lib NAME: the allocator library's path, empty when not installed.
find_lib() {
	for d in "/usr/lib/$(uname -m)-linux-gnu" /usr/lib64 /usr/lib /usr/local/lib; do
		if [ -e "$d/$1" ]; then
			echo "$d/$1"
			return
		fi
	done
}

# val KEY: value of the first "KEY=" line of the report ("" when absent).
val() {
	awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$out"
}

# expect KEY WANTED: the report's KEY equals WANTED.
expect() {
	got=$(val "$1")
	[ "$got" = "$2" ] || fail "$1: expected '$2', got '$got'"
}

# expect_bang KEY: KEY is reported as a failure ("!reason").
expect_bang() {
	got=$(val "$1")
	case $got in
	!*) ;;
	*) fail "$1: expected '!<reason>', got '$got'" ;;
	esac
}

# probe_run CASE PRELOAD [VAR=VALUE...]: runs the command with the probe
# behind PRELOAD (empty: probe alone), report in $out; checks the
# invariants every report must meet.  The command is ls: it mallocs and
# leaves through exit(), so the destructor's lines come too (dash's `sh -c`
# leaves through _exit(), and every process image would report).
probe_run() {
	name=$1 pre=$2
	shift 2
	out=$tmp/$name.out
	ran=$((ran + 1))
	before=$fails
	env LD_PRELOAD="${pre:+$pre:}$probe" MB_PROBE_FD=3 "$@" \
		ls -l / 3>"$out" >/dev/null 2>"$tmp/$name.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "command exited with $rc: $(cat "$tmp/$name.err")"
	[ -n "$(val malloc_so)" ] || fail "malloc_so is empty"
	[ -n "$(val version)" ] || fail "version is empty"
	[ "$(grep -c '^probe=done$' "$out")" -eq 1 ] || fail "no single probe=done"
	[ "$(tail -n 1 "$out")" = "probe=end" ] || fail "last line is not probe=end"
	[ "$(grep -c '^probe_truncated=' "$out")" -eq 0 ] || fail "report truncated"
	grep -q '^stat:' "$out" || [ "$(val family)" = mimalloc ] || fail "no stat: lines"
	if [ "$fails" -ne "$before" ]; then
		sed 's/^/    /' "$out" >&2
	fi
}

# glibc: the probe alone.
probe_run glibc ""
expect family glibc
case $(val malloc_so) in
*/libc.so*) ;;
*) fail "malloc_so: expected libc.so*, got '$(val malloc_so)'" ;;
esac
expect version "$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
grep -q '^stat:mallinfo2.arena=' "$out" || fail "no stat:mallinfo2.arena"

# Nothing at all is written when MB_PROBE_FD is unset or unusable.
name="unset"
LD_PRELOAD=$probe ls / >/dev/null 3>"$tmp/unset.out"
[ ! -s "$tmp/unset.out" ] || fail "wrote a report without MB_PROBE_FD"
for bad in abc 3x -1 99; do
	name=bad-fd-$bad
	LD_PRELOAD=$probe MB_PROBE_FD=$bad ls / >/dev/null 3>"$tmp/bad.out" ||
		fail "command failed"
	[ ! -s "$tmp/bad.out" ] || fail "wrote to fd 3 with MB_PROBE_FD=$bad"
done

je=$(find_lib libjemalloc.so.2)
if [ -n "$je" ]; then
	probe_run jemalloc "$je" MALLOC_CONF=dirty_decay_ms:1234 \
		MB_PROBE_READ=opt.dirty_decay_ms/ssize,opt.retain/bool,opt.thp/string,opt.no_such/size,opt.retain/size
	expect family jemalloc
	expect malloc_so "$(readlink -f "$je")"
	grep -q '^api:je_malloc=' "$out" && fail "a je_-prefixed API reported for Debian's unprefixed build"
	expect api:mallctl "$(readlink -f "$je")"
	expect env:MALLOC_CONF dirty_decay_ms:1234
	expect tun:opt.dirty_decay_ms/ssize 1234
	expect tun:opt.retain/bool 1
	expect tun:opt.thp/string default
	expect_bang tun:opt.no_such/size
	expect_bang tun:opt.retain/size
	grep -q '^stat:stats.resident=[0-9]' "$out" || fail "no stat:stats.resident"

	# A malformed value is rejected by jemalloc, which carries on with the
	# default: the read-back shows it, so a harness comparing values catches it.
	probe_run jemalloc-bad "$je" MALLOC_CONF=dirty_decay_ms:notanumber \
		MB_PROBE_READ=opt.dirty_decay_ms/ssize
	expect family jemalloc
	expect tun:opt.dirty_decay_ms/ssize 10000
	grep -q 'Invalid conf' "$tmp/$name.err" || fail "no 'Invalid conf' warning on stderr"
else
	echo "skip jemalloc: libjemalloc.so.2 not installed" >&2
fi

for lib in libtcmalloc.so.4 libtcmalloc_minimal.so.4; do
	tc=$(find_lib $lib)
	if [ -z "$tc" ]; then
		echo "skip tcmalloc: $lib not installed" >&2
		continue
	fi
	probe_run "$lib" "$tc" TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES=12345678 \
		TCMALLOC_RELEASE_RATE=2.5 \
		MB_PROBE_READ=tcmalloc.max_total_thread_cache_bytes,release_rate,flag:tcmalloc_heap_limit_mb/int64,no.such.property,opt.dirty_decay_ms/ssize
	expect family tcmalloc
	expect malloc_so "$(readlink -f "$tc")"
	expect env:TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES 12345678
	expect tun:tcmalloc.max_total_thread_cache_bytes 12345678
	expect tun:release_rate 2.5
	expect tun:flag:tcmalloc_heap_limit_mb/int64 0
	expect_bang tun:no.such.property
	expect_bang tun:opt.dirty_decay_ms/ssize
	grep -q '^stat:generic.heap_size=[0-9]' "$out" || fail "no stat:generic.heap_size"
done

mi=$(find_lib libmimalloc.so.2)
if [ -n "$mi" ]; then
	# The index of mi_option_decommit_delay in the installed header's enum.
	idx=15
	if [ -r /usr/include/mimalloc.h ]; then
		idx=$(awk '/typedef enum mi_option_e/ { on = 1; n = 0; next }
			on && /}/ { exit }
			on { sub(/\/\/.*/, ""); if (match($0, /mi_option_[a-z_]+/)) {
				if (substr($0, RSTART, RLENGTH) == "mi_option_decommit_delay") { print n; exit }
				n++ } }' /usr/include/mimalloc.h)
	fi
	[ -n "$idx" ] || idx=15     # mimalloc 2.0.9
	wrong=$((idx + 1))
	probe_run mimalloc "$mi" MIMALLOC_DECOMMIT_DELAY=77 \
		MB_PROBE_READ=decommit_delay/"$idx",decommit_delay/"$wrong"
	expect family mimalloc
	expect malloc_so "$(readlink -f "$mi")"
	expect env:MIMALLOC_DECOMMIT_DELAY 77
	case $(val version) in
	2.0.*) expect tun:decommit_delay/"$idx" 77 ;;
	*) expect_bang tun:decommit_delay/"$idx" ;;
	esac
	expect_bang tun:decommit_delay/"$wrong"
else
	echo "skip mimalloc: libmimalloc.so.2 not installed" >&2
fi

# Two allocators loaded: the family is the one serving malloc, and the other
# one's API is reported with its own object so a harness can tell them apart.
tc=$(find_lib libtcmalloc_minimal.so.4)
if [ -n "$je" ] && [ -n "$tc" ]; then
	probe_run two "$tc:$je" MB_PROBE_READ=opt.dirty_decay_ms/ssize
	expect family tcmalloc
	expect api:mallctl "$(readlink -f "$je")"
	expect_bang tun:opt.dirty_decay_ms/ssize
fi

# A non-PIE program that takes malloc's address: dlsym(RTLD_DEFAULT) yields
# the program's canonical PLT stub, not the allocator (Debian's python3.11).
nopie=$tmp/nopie
if [ -n "$je" ] && printf '%s\n' '#include <stdlib.h>' \
	'void *(*volatile fp)(size_t);' \
	'int main(void) { fp = malloc; free(fp(100)); exit(0); }' |
	${CC:-cc} -O0 -fno-pie -no-pie -x c -o "$nopie" - 2>/dev/null; then
	name=nopie
	ran=$((ran + 1))
	out=$tmp/nopie.out
	LD_PRELOAD="$je:$probe" MB_PROBE_FD=3 "$nopie" 3>"$out" || fail "command failed"
	expect family jemalloc
	expect malloc_so "$(readlink -f "$je")"
else
	echo "skip non-PIE case: no jemalloc or no C compiler" >&2
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed over $ran probe run(s)" >&2
	exit 1
fi
echo "ok: $ran probe runs"
exit 0
