#!/usr/bin/env bash
# Runs kanuki's whole test suite on a fresh Debian/Ubuntu machine.
#
# The tests start their own servers (PostgreSQL, MariaDB, ...) on free loopback ports in
# temporary directories; this script only makes sure the programs they need are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)          # PostgreSQL behind PgBouncer (pool modes)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server) # sentinels run as redis-server --sentinel: no redis-sentinel package
command -v memcached >/dev/null 2>&1 || [ -x /usr/bin/memcached ] || missing+=(memcached)
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || missing+=(etcd-server)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)                 # browser tests of kanuki demo board
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
{ [ -d /usr/share/zookeeper ] && [ -f /usr/share/java/zookeeper.jar ]; } || missing+=(zookeeper) # also creates the zookeeper user (servers run as it under root)

if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh: installing ${missing[*]}" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "test.sh: missing packages: ${missing[*]}; install them (apt-get install ${missing[*]}) and rerun" >&2
    exit 1
  fi
fi

mvn -B -ntp verify "$@"

# --- release shape (scripts/check-release.sh) ---------------------------------------------------
# After the suite: stage a deploy of every published module (pom, jar, sources, javadoc,
# checksums) and build + run a consumer from README.md's Maven snippet. Reuses the build above.
./scripts/check-release.sh
# --- end release shape ---------------------------------------------------------------------------
