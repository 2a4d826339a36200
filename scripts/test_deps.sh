#!/usr/bin/env bash
# The machine's own packages the tests need (Debian names), installed when missing:
#   postgresql      the throwaway PostgreSQL server of the store tests (tests/postgres_server.py)
#   openssh-server  the SSH test hosts' sshd (tests/integration/ssh_hosts.py)
#   openssh-client  ssh and ssh-keygen, for the same hosts
#   iproute2        ip and ss: the hosts' network namespaces
#   util-linux      unshare and runuser
#   graphviz        dot, which draws stack graphs as SVG (graph: svg)
# As root it installs them with apt-get (`make test` runs this first).  As another user
# it prints the command to run; the PostgreSQL tests then run the server as that user,
# while the SSH host tests need root (network namespaces) and fail saying so.
set -euo pipefail

missing=()
compgen -G '/usr/lib/postgresql/*/bin/initdb' > /dev/null || command -v initdb > /dev/null \
  || missing+=(postgresql)
[[ -x /usr/sbin/sshd ]] || missing+=(openssh-server)
command -v ssh > /dev/null && command -v ssh-keygen > /dev/null || missing+=(openssh-client)
command -v ip > /dev/null && command -v ss > /dev/null || missing+=(iproute2)
command -v unshare > /dev/null && command -v runuser > /dev/null || missing+=(util-linux)
command -v dot > /dev/null || missing+=(graphviz)
((${#missing[@]})) || exit 0

install=(apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}")
if [[ $(id -u) != 0 ]] || ! command -v apt-get > /dev/null; then
  echo "test_deps: the tests need ${missing[*]}; as root run: ${install[*]}" >&2
  exit 0
fi
echo "test_deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A machine whose package lists were never fetched (or are old) cannot find them: update once.
"${install[@]}" > /dev/null 2>&1 || { apt-get update -qq && "${install[@]}"; }
