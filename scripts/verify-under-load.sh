#!/usr/bin/env bash
# Runs the README's test command (./mvnw verify) with CPU-bound processes running beside it, the way
# a shared CI host or a developer's busy laptop runs it. The suite must pass here too: its bounds come
# from what each clause means (a TTL, a renewal interval), not from how idle the machine is.
#
#   scripts/verify-under-load.sh            # two burners, the whole suite
#   BURNERS=3 scripts/verify-under-load.sh -pl lock-redis -am   # more load, extra Maven arguments
set -euo pipefail
cd "$(dirname "$0")/.."

burners=${BURNERS:-2}
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap stop EXIT
for _ in $(seq "$burners"); do
  # A busy loop in its own shell: one core's worth of load each, no I/O.
  bash -c 'while :; do :; done' &
  pids+=($!)
done
echo "verify-under-load: ${burners} CPU-bound processes running beside the suite (pids ${pids[*]})"
start=$(date +%s)
status=0
./mvnw verify -B -ntp "$@" || status=$?
echo "verify-under-load: exit ${status} after $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
