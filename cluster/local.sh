#!/usr/bin/env bash
# A local multi-node Ray cluster on this machine: a head and N worker nodes on loopback.
#
#   cluster/local.sh start [N]     start a head (port $RAY_PORT, default 6379) and N workers (default 2)
#   cluster/local.sh stop          stop the nodes of this cluster (others on the machine are left alone)
#   cluster/local.sh status        ray status
#
# Then: distbench sweep run SPEC --address 127.0.0.1:$RAY_PORT   (or RAY_ADDRESS=... and --address auto)
# Each node gets 1 CPU (RAY_NODE_CPUS) so shards really spread over the nodes.
set -euo pipefail
RAY=${RAY:-ray}
PORT=${RAY_PORT:-6379}
CPUS=${RAY_NODE_CPUS:-1}
TMP=${RAY_TMPDIR:-/tmp/ray-distbench-$PORT}
export RAY_AUTH_MODE=${RAY_AUTH_MODE:-disabled}

cmd=${1:-}
case "$cmd" in
  start)
    n=${2:-2}
    "$RAY" start --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus="$CPUS" \
      --include-dashboard=false --temp-dir="$TMP" --disable-usage-stats >/dev/null
    for i in $(seq 1 "$n"); do
      "$RAY" start --address="127.0.0.1:$PORT" --node-ip-address=127.0.0.1 --num-cpus="$CPUS" \
        --temp-dir="$TMP" --disable-usage-stats >/dev/null
    done
    echo "ray cluster: head + $n workers at 127.0.0.1:$PORT"
    ;;
  stop)
    # Only this cluster's processes (they all name its temp dir), not other Ray instances
    # on the machine (`ray stop` would stop every one of them).
    # Their children (Ray's agents and workers, whose titles hide the temp dir) go too.
    # The nodes first, the head's GCS last: a raylet told to stop while the GCS stops too
    # waits for it (about 10 s, then the KILL below); with the GCS still up it exits in ~1 s.
    pids=$(pgrep -f -- "$TMP/" || true)
    gcs=$(pgrep -f -- "gcs_server.*$TMP/" || true)
    nodes=$(echo "$pids" | grep -vxF -e "${gcs:-none}" || true)
    children=""
    for p in $pids; do children="$children $(pgrep -P "$p" || true)"; done
    # shellcheck disable=SC2086
    kill -TERM $nodes $children 2>/dev/null || true
    for _ in $(seq 1 50); do
      pgrep -f -- "$TMP/" | grep -qvxF -e "${gcs:-none}" || break
      sleep 0.2
    done
    # shellcheck disable=SC2086
    kill -TERM $gcs 2>/dev/null || true
    for _ in $(seq 1 50); do
      pgrep -f -- "$TMP/" >/dev/null || break
      sleep 0.2
    done
    # shellcheck disable=SC2086
    kill -KILL $pids $children 2>/dev/null || true
    echo "ray cluster at 127.0.0.1:$PORT stopped"
    ;;
  status)
    "$RAY" status --address="127.0.0.1:$PORT"
    ;;
  *)
    echo "usage: $0 start [N] | stop | status" >&2
    exit 2
    ;;
esac
