#!/usr/bin/env bash
# Many processes waiting for one lock name: N `kanuki run -w 120s` started 50 ms apart, each
# holding for a 10 ms command. Prints how many were served (exit 0), how many timed out (75),
# the total time and the files left. Run from the worktree root after
#   mvn -q -B -ntp -DskipTests -pl kanuki-cli -am package
# Usage: kanuki-file/src/test/many-waiters.sh STRATEGY [N] [DIR]
set -u
strategy=${1:?usage: many-waiters.sh STRATEGY [N] [DIR]}
n=${2:-200}
dir=${3:-$(mktemp -d /tmp/kanuki-many.XXXXXX)}
root=$(cd "$(dirname "$0")/../../.." && pwd)
# The launcher on the built jar, not ./kanuki: that one rebuilds when a source is newer, and 200 of
# them would start 200 builds.
export KANUKI_CLASSPATH=${KANUKI_CLASSPATH:-$root/kanuki-cli/target/kanuki.jar}
kanuki=${KANUKI:-$root/kanuki-cli/src/main/dist/bin/kanuki}
results=$(mktemp -d /tmp/kanuki-many-results.XXXXXX)
start=$(date +%s.%N)
for i in $(seq 1 "$n"); do
    ( "$kanuki" run -w 120s -b "file:$dir?strategy=$strategy" board -- sleep 0.01 >/dev/null 2>"$results/$i.err"
      echo $? > "$results/$i.rc" ) &
    sleep 0.05
done
wait
end=$(date +%s.%N)
served=$(grep -lx 0 "$results"/*.rc | wc -l)
busy=$(grep -lx 75 "$results"/*.rc | wc -l)
other=$((n - served - busy))
left=$(ls -A "$dir" | wc -l)
printf 'strategy=%s served=%d/%d timed-out=%d other-failures=%d total=%.1fs files-left=%d\n' \
    "$strategy" "$served" "$n" "$busy" "$other" "$(echo "$end - $start" | bc)" "$left"
if [ "$other" -gt 0 ]; then
    grep -h . "$results"/*.err | sort | uniq -c | head -5
fi
rm -rf "$results"
[ "$served" -eq "$n" ]
