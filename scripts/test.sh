#!/usr/bin/env bash
# Runs kanuki's whole test suite on a fresh Debian/Ubuntu machine.
#
# The tests start their own servers (PostgreSQL, MariaDB, ...) on free loopback ports in
# temporary directories; this script only makes sure the programs they need are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# --quick (first argument only): the developer's loop. Leaves out the test classes tagged servers,
# faults, browser and slow (docs/architecture.md, "Test tiers"), so needs no server packages, and
# skips the release-shape check and the Java 25 leg. The other arguments go to mvn as always.
quick=false
if [ "${1:-}" = --quick ]; then
  quick=true
  shift
fi

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ "$quick" = false ]; then
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)          # PostgreSQL behind PgBouncer (pool modes)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server) # sentinels run as redis-server --sentinel: no redis-sentinel package
command -v memcached >/dev/null 2>&1 || [ -x /usr/bin/memcached ] || missing+=(memcached)
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || missing+=(etcd-server)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)                 # browser tests of kanuki demo board
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
{ [ -d /usr/share/zookeeper ] && [ -f /usr/share/java/zookeeper.jar ]; } || missing+=(zookeeper) # also creates the zookeeper user (servers run as it under root)
fi

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

if [ "$quick" = true ]; then
  # JUnit 5 tags on the test classes; surefire's excludedGroups property (the pom sets no groups).
  # No javadoc and source jars either (as in the Java 25 leg): on a loaded 2-core machine javadoc
  # takes minutes, and the full run builds them.
  mvn -B -ntp verify -DexcludedGroups=servers,faults,browser,slow -Dmaven.javadoc.skip=true -Dmaven.source.skip=true "$@"
  echo "test.sh: quick tier done (no servers, faults, browser or slow tests; no release check, no Java 25 leg)"
  exit 0
fi

mvn -B -ntp verify "$@"

# --- release shape (scripts/check-release.sh) ---------------------------------------------------
# After the suite: stage a deploy of every published module (pom, jar, sources, javadoc,
# checksums) and build + run a consumer from README.md's Maven snippet. Reuses the build above.
./scripts/check-release.sh
# --- end release shape ---------------------------------------------------------------------------

# ---- Java 25 leg --------------------------------------------------------------------------------
# Runs kanuki-core, the file, SQLite, JDBC and Redis backends and the contract suites in their tests
# again on the newest JDK here, when that is 21 or later (virtual threads) and not the default one;
# profile java25-leg (pom.xml) leaves out the slow fault and process tests, which the run above has.
# KANUKI_JDK25=<a JDK's home> chooses the JDK; KANUKI_JDK25=none skips the leg.
jdk_major() { # the feature version of the JDK at $1, from its release file ("1.8.0" -> 8)
  local v
  v=$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$1/release" 2>/dev/null) || true
  v=${v#1.}
  v=${v%%[.+-]*}
  case $v in '' | *[!0-9]*) ;; *) echo "$v" ;; esac
}
leg_jdk=${KANUKI_JDK25:-}
if [ -z "$leg_jdk" ]; then
  best=0
  for home in /usr/lib/jvm/*/; do
    home=${home%/}
    [ -x "$home/bin/java" ] && [ ! -L "$home" ] || continue
    major=$(jdk_major "$home")
    if [ -n "$major" ] && [ "$major" -gt "$best" ]; then best=$major; leg_jdk=$home; fi
  done
fi
leg_major=
if [ -n "$leg_jdk" ] && [ -x "$leg_jdk/bin/java" ]; then leg_major=$(jdk_major "$leg_jdk"); fi
default_home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
leg_modules=kanuki-core,kanuki-torture,kanuki-testkit,kanuki-file,kanuki-sqlite,kanuki-jdbc,kanuki-redis
if [ "$leg_jdk" = none ]; then
  echo "test.sh: Java 25 leg skipped (KANUKI_JDK25=none)"
elif [ -z "$leg_major" ] || [ "$leg_major" -lt 21 ]; then
  echo "test.sh: Java 25 leg skipped: no JDK 21 or later found (looked in /usr/lib/jvm; set KANUKI_JDK25 to a JDK's home)"
elif [ "$(readlink -f "$leg_jdk")" = "$(readlink -f "$default_home")" ]; then
  echo "test.sh: Java 25 leg skipped: the newest JDK ($leg_jdk) is the default one, which ran the suite above"
else
  echo "test.sh: Java 25 leg: $leg_modules on $leg_jdk (Java $leg_major)"
  JAVA_HOME=$leg_jdk mvn -B -ntp verify -P java25-leg -pl "$leg_modules" -Dmaven.javadoc.skip=true -Dmaven.source.skip=true "$@"
fi
