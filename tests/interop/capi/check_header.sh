#!/usr/bin/env bash
# Compare oxmq's zmq.h with Debian's libzmq zmq.h: every object-like macro the
# system header defines (stable API) must exist in ours with the same value,
# and the struct sizes must agree. Prints what differs; exits 1 if anything does.
set -euo pipefail
OURS=${1:-crates/oxmq-capi/include}
CC=${CC:-gcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

names() { # object-like ZMQ_*/E* macros defined by a header (after its includes)
    echo '#include <zmq.h>' | $CC -E -dM "$@" -x c - |
        awk '$1 == "#define" && $2 !~ /\(/ {print $2}' |
        grep -E '^(ZMQ_|E[A-Z]+$)' | sort -u
}
names > "$work/system"
names -I"$OURS" > "$work/ours"

# Names only the version or build differ on, or that are not constants.
skip='^(ZMQ_VERSION(_PATCH)?|ZMQ_EXPORT|ZMQ_DEFINED_STDINT|ZMQ_H_INCLUDED|ZMQ_HAVE_.*|ZMQ_BUILD_DRAFT_API)$'
missing=$(comm -23 "$work/system" "$work/ours" | grep -Ev "$skip" || true)
common=$(comm -12 "$work/system" "$work/ours" | grep -Ev "$skip")

{
    echo '#include <zmq.h>'
    echo '#include <stdio.h>'
    echo 'int main(void) {'
    for n in $common; do echo "    printf(\"$n %lld\\n\", (long long)($n));"; done
    echo '    printf("sizeof(zmq_msg_t) %zu\n", sizeof(zmq_msg_t));'
    echo '    printf("alignof(zmq_msg_t) %zu\n", _Alignof(zmq_msg_t));'
    echo '    printf("sizeof(zmq_pollitem_t) %zu\n", sizeof(zmq_pollitem_t));'
    echo '    return 0; }'
} > "$work/values.c"
$CC -std=c11 -o "$work/system_values" "$work/values.c"
$CC -std=c11 -I"$OURS" -o "$work/our_values" "$work/values.c"
"$work/system_values" > "$work/system.txt"
"$work/our_values" > "$work/ours.txt"

status=0
if [ -n "$missing" ]; then
    echo "macros in Debian's zmq.h missing from ours:" $missing
    status=1
fi
if ! diff -u "$work/system.txt" "$work/ours.txt"; then
    echo "values differ (- Debian libzmq, + oxmq)"
    status=1
fi
echo "check_header: $(wc -l < "$work/ours.txt") constants and layouts compared with $(pkg-config --modversion libzmq 2>/dev/null || echo system) zmq.h"
exit $status
