#!/usr/bin/env bash
# Checks the installable tarball as a user meets it: untarred into an empty directory, bin/kanuki
# run from another directory and through a symlink, and `run` under two locales and two
# normalizations of one name (one lock; CMD gets the user's own locale back); `demo board` from
# the tarball and from the shaded jar beside it (Jetty is packaged in both).
#   dist-check.sh TARBALL WORKDIR      (run by `mvn verify` in kanuki-cli)
set -euo pipefail
tarball="$1"
work="$2"
shaded="$(cd "$(dirname "$tarball")" && pwd)/kanuki.jar" # the fat jar beside the tarball
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
# A jar replaced after the sharing archive was made, by one with an older time (as unpacking the
# same tarball again does): the JVM refuses the archive, kanuki deletes its key, and the next run
# makes it again.
key="$(echo "$work"/cache/kanuki/cds/*.jsa.key)"
[[ -f "$key" ]] || fail "no key beside the class-data sharing archive"
touch -d 2000-01-01 "$(echo "$work"/kanuki-*/lib/kanuki-core-*.jar)"
"$bin" --version >/dev/null
[[ ! -e "$key" ]] || fail "the key of an archive the JVM refused was kept"
"$bin" --version >/dev/null
[[ -f "$key" ]] || fail "the refused archive was not made again"
# kanuki demo board from the tarball and from the shaded jar beside it: Jetty is packaged in both.
http() { # http PORT REQUEST-LINE [FORM]: the response, over bash's /dev/tcp (no curl needed)
  local body="${3:-}"
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf '%s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s' \
      "$2" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}
check_board() { # check_board NAME COMMAND...: starts a board, posts once, reads the counts
  local name="$1"; shift
  local out="$work/$name.out" port
  "$@" demo board --port 0 --data "$work/$name.txt" -b "file:$work/board-locks" >"$out" 2>"$work/$name.err" &
  local pid=$!
  for _ in $(seq 600); do
    grep -q '^kanuki board: http://127.0.0.1:[0-9]*/$' "$out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || fail "$name: demo board exited: $(cat "$work/$name.err")"
    sleep 0.1
  done
  port="$(sed -n 's|^kanuki board: http://127.0.0.1:\([0-9]*\)/$|\1|p' "$out")"
  [[ -n "$port" ]] || fail "$name: demo board printed no URL"
  http "$port" "POST /post" "token=dist-check&author=dist&text=hello" | head -1 | grep -q ' 303 ' \
    || fail "$name: POST /post was not answered 303"
  http "$port" "GET /stats" | grep -q '^kept 1' || fail "$name: the post was not kept"
  kill "$pid"
  wait "$pid" || true
}
check_board tarball "$bin"
check_board shaded java -jar "$shaded"

echo "dist-check: $(basename "$tarball") works"
