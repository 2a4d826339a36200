#!/usr/bin/env bash
# The throwaway OpenStack cloud of the real-cloud tests (tests/cloud/cloud.py).
#
#   scripts/cloud.sh packages  Debian's MariaDB and RabbitMQ (apt-get, as root)
#   scripts/cloud.sh deps      those packages, the services' venv (.build/cloud-venv) and
#                              the openstack.cloud collection (from the `ansible` package
#                              on PyPI)
#   scripts/cloud.sh start     start the cloud in .build/cloud; writes .build/cloud/clouds.yaml
#   scripts/cloud.sh up        deps, then a fresh cloud started (what was there is removed):
#                              `make test` runs this in the background while the engine's
#                              tests run, and stops the cloud at its end
#   scripts/cloud.sh stop      stop it: nothing of it is left running
#   scripts/cloud.sh status    what runs, and its memory
#   scripts/cloud.sh test      deps, start, the tests marked openstack_cloud, stop
#   scripts/cloud.sh bench ARGS...   deps, start, benchmarks/bench_cloud.py (hotplay
#                              against the real Heat engine on the cloud), stop
#   scripts/cloud.sh bench-small ARGS...   deps, start, benchmarks/bench_small.py (a
#                              one-server stack, one with a volume, 20 servers: hotplay,
#                              Heat and an ideal openstacksdk client, with profiles), stop
#   scripts/cloud.sh bench-scaling ARGS...   deps, start, benchmarks/bench_scaling_cloud.py
#                              (a group of 20 servers scaled to 40 and back by signals,
#                              hotplay and Heat), stop
#   scripts/cloud.sh openstack ARGS...   the openstack CLI, pointed at the cloud
#
# HOTPLAY_CLOUD_DIR overrides .build/cloud.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=scripts/venv_cache.sh
source scripts/venv_cache.sh
# A link to the venv kept between clones (scripts/venv_cache.sh).
venv=$root/.build/cloud-venv
dir=${HOTPLAY_CLOUD_DIR:-$root/.build/cloud}
collections=$root/.build/openstack-collections
# The `ansible` release whose bundled openstack.cloud the tests drive.
ansible_package=ansible==12.3.0

# pip's warnings about this machine's unreachable local indexes say nothing here.
quiet_pip() { "$@" 2> >(grep -v "Location 'file:" >&2); }

system_packages() {
  local missing=()
  command -v mariadbd > /dev/null || missing+=(mariadb-server mariadb-client)
  [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] || missing+=(rabbitmq-server)
  ((${#missing[@]})) || return 0
  local install=(apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}")
  if [[ $(id -u) != 0 ]] || ! command -v apt-get > /dev/null; then
    echo "cloud: needs ${missing[*]}; as root run: ${install[*]}" >&2
    return 1
  fi
  echo "cloud: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # The packages' own services must not start: the cloud runs its own, privately.
  local policy=/usr/sbin/policy-rc.d added=
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && added=1
  fi
  "${install[@]}" > /dev/null 2>&1 || { apt-get update -qq && "${install[@]}" > /dev/null; }
  [[ -z $added ]] || rm -f "$policy"
}

services_venv() {
  local python inputs cached
  python=$(bash scripts/find_python.sh)
  # What the venv is built from: its requirements, the ML2 driver's source, the Python.
  inputs="$(cat tests/cloud/requirements.txt tests/cloud/constraints.txt)
$(find tests/cloud/bind_all -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 cat)
$("$python" --version)"
  cached=$(cached_venv_path cloud-venv "$inputs")
  with_cached_venv "$venv" "$cached" build_services_venv "$python" "$cached"
}

build_services_venv() {
  local python=$1 target=$2
  echo "cloud: installing the OpenStack services into $target" >&2
  "$python" -m venv "$target"
  quiet_pip "$target/bin/pip" install -q --upgrade pip
  # Built from a copy: a setuptools build writes into the directory it builds.
  rm -rf "$root/.build/cloud-bind-all" && cp -r tests/cloud/bind_all "$root/.build/cloud-bind-all"
  quiet_pip "$target/bin/pip" install -q -c tests/cloud/constraints.txt -r tests/cloud/requirements.txt \
    "$root/.build/cloud-bind-all"
}

openstack_collection() {
  [[ -f $collections/ansible_collections/openstack/cloud/MANIFEST.json ]] && return 0
  echo "cloud: extracting openstack.cloud from $ansible_package" >&2
  local download=$root/.build/download
  mkdir -p "$download"
  # The services' venv's pip and Python: this runs before the project's venv exists
  # when `make test` starts the cloud in the background.
  quiet_pip "$venv/bin/pip" download -q --no-deps -d "$download" "$ansible_package"
  rm -rf "$collections" && mkdir -p "$collections"
  "$venv/bin/python" - "$download" "$collections" << 'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("ansible-*.whl"))
with zipfile.ZipFile(wheel) as archive:
    members = [name for name in archive.namelist()
               if name.startswith("ansible_collections/openstack/cloud/")]
    archive.extractall(sys.argv[2], members)
PY
}

fresh_start() {
  local attempt
  for attempt in 1 2; do
    "$venv/bin/python" tests/cloud/cloud.py stop "$dir"
    rm -rf "$dir"
    "$venv/bin/python" tests/cloud/cloud.py start "$dir" && return 0
    # Its reason is printed above.  A start can fail on what a loaded machine does to
    # it (a port taken for a moment, a service slow to load); a second one tells.
    ((attempt == 1)) && echo "cloud: the start failed; starting it once more" >&2
  done
  return 1
}

case "${1:-}" in
  packages) system_packages ;;
  deps) system_packages && services_venv && openstack_collection ;;
  up) "$0" deps && fresh_start ;;
  start) exec "$venv/bin/python" tests/cloud/cloud.py start "$dir" ;;
  stop) exec "$venv/bin/python" tests/cloud/cloud.py stop "$dir" ;;
  status) exec "$venv/bin/python" tests/cloud/cloud.py status "$dir" ;;
  openstack) shift
    OS_CLIENT_CONFIG_FILE=$dir/clouds.yaml OS_CLOUD=hotplay exec "$venv/bin/openstack" "$@" ;;
  test | bench | bench-small | bench-scaling)
    "$0" deps
    trap '"$venv/bin/python" tests/cloud/cloud.py stop "$dir"' EXIT
    fresh_start
    export HOTPLAY_CLOUD_DIR=$dir HOTPLAY_OPENSTACK_COLLECTIONS=$collections
    if [[ $1 == test ]]; then
      bash scripts/test.sh cloud
    elif [[ $1 == bench ]]; then
      .venv/bin/python benchmarks/bench_cloud.py "${@:2}"
    elif [[ $1 == bench-scaling ]]; then
      .venv/bin/python benchmarks/bench_scaling_cloud.py "${@:2}"
    else
      .venv/bin/python benchmarks/bench_small.py "${@:2}"
    fi ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
