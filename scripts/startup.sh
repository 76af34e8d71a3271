#!/usr/bin/env bash
# Start-up of `kanuki run -b file:DIR x -- true` against `java -version`, measured side by side:
# ROUNDS rounds (default 20), each running both commands in turn, after 2 warm-up rounds;
# prints both medians (wall clock, milliseconds) and their ratio.
#   scripts/startup.sh [ROUNDS] [KANUKI]
# KANUKI defaults to bin/kanuki of kanuki-cli/target/kanuki-*.tar.gz (build it with mvn package),
# untarred into a temporary directory: the command as installed.
set -euo pipefail
rounds="${1:-20}"
root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
if [[ -n "${2:-}" ]]; then
  kanuki="$2"
else
  tarball="$(ls "$root"/kanuki-cli/target/kanuki-*.tar.gz 2>/dev/null | head -1)"
  [[ -n "$tarball" ]] || { echo "no kanuki-cli/target/kanuki-*.tar.gz: run mvn package first" >&2; exit 1; }
  tar xzf "$tarball" -C "$dir"
  kanuki="$(echo "$dir"/kanuki-*/bin/kanuki)"
  export XDG_CACHE_HOME="$dir/cache" # its class-data sharing archive goes with it
fi

"$kanuki" run -b "file:$dir" x -- true # builds, and makes the class-data sharing archive, once

elapsed_ms() { # runs "$@" silently; prints its wall-clock time in milliseconds
  local start end
  start=$EPOCHREALTIME
  "$@" >/dev/null 2>&1
  end=$EPOCHREALTIME
  echo $(( (${end/./} - ${start/./}) / 1000 ))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

kanuki_times=() java_times=()
for ((i = -2; i < rounds; i++)); do
  k=$(elapsed_ms "$kanuki" run -b "file:$dir" x -- true)
  j=$(elapsed_ms java -version)
  if ((i >= 0)); then
    kanuki_times+=("$k") java_times+=("$j")
  fi
done
k_median=$(printf '%s\n' "${kanuki_times[@]}" | median)
j_median=$(printf '%s\n' "${java_times[@]}" | median)
echo "kanuki run -b file:DIR x -- true: median ${k_median} ms (of $rounds)"
echo "java -version:                    median ${j_median} ms"
awk -v k="$k_median" -v j="$j_median" 'BEGIN { printf "ratio: %.2f\n", k / j }'
