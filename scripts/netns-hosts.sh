#!/usr/bin/env bash
# Pretend hosts on one machine: N network namespaces joined by a bridge, for multi-host
# tests of `partita launch` and MPI over TCP. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN),
# iproute2, and nftables for `cut`.
#
# Addresses are in 127.0.0.0/8 only: host K (0-based) is 127.1.0.(K+1)/16 on its eth0.
# Inside a host, lo keeps only 127.0.0.1/32 (the default 127.0.0.0/8 local route would
# swallow 127.1.0.x), and route_localnet=1 lets 127/8 packets leave through eth0.
# The hosts of set NAME are the namespaces NAME-h0..NAME-h(N-1); the bridge is NAME-br.
# Several sets can exist at once (their namespaces are disjoint; addresses repeat, but
# each set has its own bridge, so they never meet).
#
# mpirun reaches a host through the rsh agent `up` writes (see `agent`): it maps a host
# name 127.1.0.(K+1) to NAME-hK and runs the daemon's command there.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: netns-hosts.sh COMMAND ...
  up NAME N          create hosts NAME-h0..NAME-h(N-1) (127.1.0.1 .. 127.1.0.N) on a bridge
  down NAME          kill every process in the set's namespaces, delete them (idempotent)
  exec NAME K CMD..  run CMD inside host K
  addr K             print host K's address (127.1.0.(K+1))
  agent NAME         print the path of the mpirun rsh agent for the set
                     (mpirun --mca plm_rsh_agent "$(netns-hosts.sh agent NAME)"); it appends
                     each host it is asked to reach to agent.log beside it
  cut NAME K...      silent partition: host K drops every packet on eth0 (nftables); lo works
  heal NAME K...     undo cut
  unplug NAME K      take host K's link down (both veth ends)
  check              exit 0 if namespaces can be created here, else print why and exit 1
Exit status: 0 on success; 2 on bad usage; otherwise the failing command's.
EOF
}

die() { echo "error: netns-hosts: $*" >&2; exit 2; }
state_dir() { echo "/run/partita-netns/$1"; }
addr() { echo "127.1.0.$(($1 + 1))"; }

check_name() {
  [[ "$1" =~ ^[a-zA-Z0-9_]{1,24}$ ]] || die "'$1': NAME must be 1-24 letters, digits or _"
}
check_index() {
  [[ "$1" =~ ^[0-9]+$ ]] && (($1 < 250)) || die "'$1': host index must be 0..249"
}

cmd_check() {
  if [ "$(id -u)" -ne 0 ]; then echo "netns-hosts: not root; cannot create namespaces"; return 1; fi
  local probe="partita_probe_$$"
  local why
  if ! why=$(ip netns add "$probe" 2>&1); then
    echo "netns-hosts: cannot create a network namespace: $why"; return 1
  fi
  if ! why=$(ip -n "$probe" link add v0 type veth peer name v1 2>&1); then
    ip netns del "$probe" 2>/dev/null || true
    echo "netns-hosts: cannot create veth pairs: $why"; return 1
  fi
  ip netns del "$probe"
}

# Sets net.ipv4 knobs so 127/8 addresses route over a real interface.
host_sysctls() {
  local ns=$1
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.route_localnet=1
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.default.route_localnet=1
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.eth0.route_localnet=1
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.lo.route_localnet=1
  # No reverse-path filtering: replies come from 127/8 over eth0.
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.eth0.rp_filter=0
}

cmd_up() {
  [ $# -eq 2 ] || die "up needs NAME N"
  local name=$1 n=$2
  check_name "$name"
  [[ "$n" =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 250)) || die "'$n': N must be 1..250"
  [ ! -e "$(state_dir "$name")" ] || die "set '$name' exists (netns-hosts.sh down $name)"
  local br="$name-br"
  mkdir -p "$(state_dir "$name")"
  echo "$n" >"$(state_dir "$name")/hosts"
  ip netns add "$br"
  ip -n "$br" link set lo up
  ip -n "$br" link add br0 type bridge
  ip -n "$br" link set br0 up
  local k ns
  for ((k = 0; k < n; k++)); do
    ns="$name-h$k"
    ip netns add "$ns"
    ip -n "$br" link add "h$k" type veth peer name eth0 netns "$ns"
    ip -n "$br" link set "h$k" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr del 127.0.0.1/8 dev lo
    ip -n "$ns" addr add 127.0.0.1/32 dev lo
    host_sysctls "$ns"
    ip -n "$ns" addr add "$(addr "$k")/16" dev eth0
    ip -n "$ns" link set eth0 up
  done
  # The rsh agent: $1 is the host name mpirun gives (an address of this set).
  local agent
  agent="$(state_dir "$name")/rsh"
  cat >"$agent" <<EOF
#!/bin/sh
# mpirun rsh agent for netns-hosts set '$name': runs "\$*" inside the host named by \$1.
host=\$1
shift
echo "\$host" >>"$(state_dir "$name")/agent.log"
case "\$host" in
  127.1.0.*) k=\$((\${host##*.} - 1)) ;;
  *) echo "netns-hosts agent: '\$host' is not a host of set $name (127.1.0.1..$n)" >&2; exit 255 ;;
esac
if [ "\$k" -lt 0 ] || [ "\$k" -ge $n ]; then
  echo "netns-hosts agent: '\$host' is not a host of set $name (127.1.0.1..$n)" >&2; exit 255
fi
exec ip netns exec "$name-h\$k" sh -c "\$*"
EOF
  chmod +x "$agent"
}

cmd_down() {
  [ $# -eq 1 ] || die "down needs NAME"
  local name=$1 ns pids
  check_name "$name"
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$name-(h[0-9]+|br)\$" || true); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086 # one word per pid
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$(state_dir "$name")"
}

cmd_exec() {
  [ $# -ge 3 ] || die "exec needs NAME K CMD..."
  check_name "$1"
  check_index "$2"
  local ns="$1-h$2"
  shift 2
  exec ip netns exec "$ns" "$@"
}

cmd_cut() {
  [ $# -ge 2 ] || die "cut needs NAME K..."
  local name=$1 k ns
  check_name "$name"
  shift
  for k in "$@"; do
    check_index "$k"
    ns="$name-h$k"
    ip netns exec "$ns" nft -f - <<'EOF'
table inet partita_cut {
  chain in { type filter hook input priority 0; policy accept; iifname "eth0" drop; }
  chain out { type filter hook output priority 0; policy accept; oifname "eth0" drop; }
}
EOF
  done
}

cmd_heal() {
  [ $# -ge 2 ] || die "heal needs NAME K..."
  local name=$1 k
  check_name "$name"
  shift
  for k in "$@"; do
    check_index "$k"
    ip netns exec "$name-h$k" nft delete table inet partita_cut 2>/dev/null || true
  done
}

cmd_unplug() {
  [ $# -eq 2 ] || die "unplug needs NAME K"
  check_name "$1"
  check_index "$2"
  ip -n "$1-h$2" link set eth0 down
  ip -n "$1-br" link set "h$2" down
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
command=$1
shift
case "$command" in
  -h | --help | help) usage ;;
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  exec) cmd_exec "$@" ;;
  addr) [ $# -eq 1 ] || die "addr needs K"; check_index "$1"; addr "$1" ;;
  agent) [ $# -eq 1 ] || die "agent needs NAME"; check_name "$1"; echo "$(state_dir "$1")/rsh" ;;
  cut) cmd_cut "$@" ;;
  heal) cmd_heal "$@" ;;
  unplug) cmd_unplug "$@" ;;
  check) cmd_check ;;
  *) echo "error: netns-hosts: unknown command '$command'" >&2; usage >&2; exit 2 ;;
esac
