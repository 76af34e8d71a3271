#!/usr/bin/env bash
# Checks the installable tarball as a user meets it: untarred into an empty directory, bin/kanuki
# run from another directory and through a symlink, and `run` under two locales and two
# normalizations of one name (one lock; CMD gets the user's own locale back).
#   dist-check.sh TARBALL WORKDIR      (run by `mvn verify` in kanuki-cli)
set -euo pipefail
tarball="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
tar xzf "$tarball" -C "$work"
bin="$(echo "$work"/kanuki-*/bin/kanuki)"
export XDG_CACHE_HOME="$work/cache"
fail() { echo "dist-check: $*" >&2; exit 1; }

cd /
"$bin" --version | grep -q '^kanuki [0-9]' || fail "bin/kanuki --version printed no version"
ln -s "$bin" "$work/kanuki"
"$work/kanuki" --help | grep -q 'postgresql://' || fail "--help through a symlink does not list the backends"
[[ -f "$(echo "$work"/cache/kanuki/cds/*.jsa)" ]] || fail "no class-data sharing archive was made"

locks="file:$work/locks"
LANG=C LC_ALL= "$work/kanuki" run -b "$locks" "$(printf 'caf\303\251')" -- \
    sh -c 'printf "%s|%s" "$KANUKI_LOCK_NAME" "${LC_ALL-unset}" > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 60' \
    "$work/held" &
holder=$!
for _ in $(seq 600); do
  [[ -f "$work/held" ]] && break
  kill -0 "$holder" 2>/dev/null || fail "the holder exited early"
  sleep 0.1
done
[[ "$(cat "$work/held")" == "$(printf 'caf\303\251|')" ]] \
  || fail "CMD saw name|LC_ALL '$(cat "$work/held")', not 'café|' (the user's LC_ALL, empty)"
set +e
LC_ALL=C.UTF-8 "$bin" run -b "$locks" -n "$(printf 'cafe\314\201')" -- true 2>/dev/null
busy=$?
set -e
kill "$holder"
wait "$holder" || true
[[ $busy == 75 ]] || fail "the NFD spelling under C.UTF-8 was not busy while the NFC one was held under LANG=C (exit $busy)"
echo "dist-check: $(basename "$tarball") works"
