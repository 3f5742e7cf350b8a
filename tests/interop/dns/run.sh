#!/bin/bash
# Runs crates/oxmq/tests/dns.rs against a dnsmasq this script controls, in a
# private mount and network namespace (`make dns-test`, as root): the
# namespace's /etc/resolv.conf (bind-mounted) points at dnsmasq on its own
# loopback, so neither the host's resolver nor its ports are touched.
#   run.sh WORKDIR TEST_BINARY
set -euo pipefail
work=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${OXMQ_DNS_INSIDE:-}" ]; then
  mkdir -p "$work"
  # dnsmasq drops to nobody and re-reads the hosts file as such.
  chmod 755 "$work"
  exec env OXMQ_DNS_INSIDE=1 unshare --mount --net --propagation private "$0" "$@"
fi

ip link set lo up
printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' >"$work/resolv.conf"
mount --bind "$work/resolv.conf" /etc/resolv.conf
# Only files and dns, whatever the host's nsswitch.conf says (no mdns, no
# nscd cache in the way).
printf 'hosts: files dns\n' >"$work/nsswitch.conf"
mount --bind "$work/nsswitch.conf" /etc/nsswitch.conf
# dnsmasq is up once it answers this name (the tests rewrite the file).
printf '127.0.0.1 probe.oxmq.test\n' >"$work/hosts"
chmod 644 "$work/hosts"
rm -f "$work/release" "$work/held.ready"
: >"$work/zone"

python3 "$here/held_dns.py" 5353 "$work/release" "$work/held.ready" "$work/zone" &
held=$!
# --local: names under oxmq.test that the hosts file lacks get NXDOMAIN at
# once; slow.oxmq.test and the names under it go to the held server.
dnsmasq --keep-in-foreground --no-resolv --no-hosts --addn-hosts="$work/hosts" \
  --listen-address=127.0.0.1 --bind-interfaces --port=53 --pid-file= \
  --local=/oxmq.test/ --server=/slow.oxmq.test/127.0.0.1#5353 \
  --log-queries --log-facility="$work/dnsmasq.log" &
dns=$!
trap 'kill $dns $held 2>/dev/null || true' EXIT

for _ in $(seq 100); do
  [ -e "$work/held.ready" ] && getent hosts probe.oxmq.test >/dev/null && break
  sleep 0.1
done
[ -e "$work/held.ready" ] && getent hosts probe.oxmq.test >/dev/null || { echo "dns-test: dnsmasq or held_dns.py did not come up"; tail "$work/dnsmasq.log"; exit 1; }

OXMQ_DNS_HOSTS="$work/hosts" OXMQ_DNS_PID=$dns OXMQ_DNS_RELEASE="$work/release" OXMQ_DNS_ZONE="$work/zone" \
  "$bin" --ignored --test-threads=1 "${@:3}"
