#!/usr/bin/env bash
# The release-shape check: could kanuki be published, and would a user's first build work?
#
#  1. One build (tests skipped: the suite has run them) deploys every module to a throw-away file
#     repository, as a release to Maven Central would, and installs into a throw-away local
#     repository. The staged repository must hold, for every published module, its POM, jar,
#     -sources.jar and -javadoc.jar with .sha1 and .md5 checksums that match; the BOM must list
#     exactly the published library modules; the modules that are not published must be absent.
#  2. A consumer project is made from the first ```xml block of README.md (the BOM import and the
#     dependencies, as a user would paste them; the BOM's version becomes this build's version),
#     resolves kanuki from the throw-away local repository, opens file: in a temporary directory,
#     takes and releases a lock and prints the token; its output is checked.
#
# A module is published unless its pom.xml sets maven.deploy.skip (kanuki-cli, kanuki-bench,
# kanuki-faults, kanuki-modular-smoke), and then it must skip the sources and javadoc jars too. The build leaves out
# kanuki-cli and kanuki-bench, which no release publishes: their shaded jars and the CLI's tarball
# took two thirds of this build's time. --all builds them too (RELEASING.md runs it before a
# release), and then checks that they stay out of the staged repository as well.
#
# Everything goes under target/release-check (the staged repository and the logs stay there for a
# look after a failure). Dependencies and plugins are copied from ~/.m2 when it has them
# (KANUKI_SEED_REPO names another local repository) and downloaded otherwise; nothing is written
# to ~/.m2. KANUKI_README reads the snippet from another file (to try a new README).
#
# Usage: scripts/check-release.sh [--all] [more Maven arguments for the deploy build, e.g. -e]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
not_built=(kanuki-cli kanuki-bench)
if [ "${1:-}" = --all ]; then
  not_built=()
  shift
fi

fail() {
  echo "check-release: FAILED: $*" >&2
  exit 1
}
step() {
  echo "check-release: $* ($((SECONDS - started)) s)"
}

version=$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' pom.xml | head -n 1)
[ -n "$version" ] || fail "cannot read the project version from pom.xml"
readme=${KANUKI_README:-README.md}
seed=${KANUKI_SEED_REPO:-$HOME/.m2/repository}

work=$root/target/release-check
staging=$work/staging
repo=$work/repo
# The local repository keeps the third-party artifacts copied by an earlier run; kanuki's own are
# always installed afresh.
find "$work" -mindepth 1 -maxdepth 1 ! -name repo -exec rm -rf {} + 2>/dev/null || true
rm -rf "$repo/dev/kanuki"
mkdir -p "$work"

# The modules of the reactor, and which are published.
mapfile -t modules < <(sed -n 's|^ *<module>\(.*\)</module>$|\1|p' pom.xml)
published=() unpublished=()
for m in "${modules[@]}"; do
  if grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$m/pom.xml"; then
    unpublished+=("$m")
    for skip in maven.source.skip maven.javadoc.skip; do
      grep -q "<$skip>true</$skip>" "$m/pom.xml" || fail "$m is not published (maven.deploy.skip) but does not set $skip"
    done
  else
    published+=("$m")
  fi
done
for m in "${not_built[@]}"; do
  [[ " ${unpublished[*]} " == *" $m "* ]] || fail "$m is published now: take it out of not_built in $0"
done
step "version $version; published: ${published[*]}; not published: ${unpublished[*]}"

# The snippet first: a README without it fails at once, not after the build.
[ -f "$readme" ] || fail "$readme not found"
snippet=$(awk '/^```xml[[:space:]]*$/ { inside = 1; next } inside && /^```/ { exit } inside { print }' "$readme")
[ -n "$snippet" ] || fail "$readme has no \`\`\`xml block: it must show the BOM import and the dependencies a user pastes into a pom.xml"
versions=$(grep -o '<version>[^<]*</version>' <<<"$snippet" || true)
[ "$(grep -c . <<<"$versions")" = 1 ] \
  || fail "$readme's first xml block must have exactly one <version> (the BOM's; the dependencies take theirs from it), found: $(echo ${versions:-none})"
grep -q '<artifactId>kanuki-bom</artifactId>' <<<"$snippet" || fail "$readme's first xml block does not import kanuki-bom"

# The throw-away local repository starts as a copy of ~/.m2 (3 s for 525 MB here; kept between
# runs and only topped up), so the builds find what ~/.m2 has and download only the rest. The
# deploy runs online (maven-deploy-plugin refuses offline mode, even for a file repository); the
# consumer builds offline first, from what the deploy build installed.
mkdir -p "$repo"
[ -d "$seed" ] && cp -r -u --preserve=timestamps "$seed/." "$repo/" 2>/dev/null || mkdir -p "$repo"
rm -rf "$repo/dev/kanuki"
maven_offline_first() { # LOG ARGS...: online again only when the local repository lacks something
  local log=$1
  shift
  mvn -B -ntp -o -Dmaven.repo.local="$repo" "$@" >"$log" 2>&1 && return
  grep -Eq 'offline mode|has not been downloaded from it before' "$log" || return 1
  echo "check-release: the local repository lacks something this build needs; building again online"
  mvn -B -ntp -Dmaven.repo.local="$repo" "$@" >"$log" 2>&1
}
projects=()
[ ${#not_built[@]} = 0 ] || projects=(-pl "$(printf '!%s,' "${not_built[@]}" | sed 's/,$//')")

# ------------------------------------------------------------------ 1. deploy
# The suite's build has just compiled everything: javac runs only for sources newer than their
# classes (the default recompiles a whole module when a dependency jar is newer, and every jar of
# this build and of the local repository is).
# The javadoc plugin skips a module whose class path and source directories look unchanged, and it
# does not see an edited source file: make it run, so that a new Javadoc warning fails here.
rm -f ./*/target/maven-javadoc-plugin-stale-data.txt
step "deploying to target/release-check/staging (log: target/release-check/deploy.log)"
if ! mvn -B -ntp -Dmaven.repo.local="$repo" "${projects[@]}" deploy -DskipTests -Dmaven.compiler.useIncrementalCompilation=false \
    -DaltDeploymentRepository=release-check::file://"$staging" "$@" >"$work/deploy.log" 2>&1; then
  grep -E '^\[(ERROR|WARNING)\].*(warning|error):' "$work/deploy.log" | head -n 20 >&2 || true
  tail -n 30 "$work/deploy.log" >&2
  fail "the deploy build failed (Javadoc warnings fail it too); see target/release-check/deploy.log"
fi

missing=()
base=${version%-SNAPSHOT}
# A SNAPSHOT is deployed with a timestamp in its file names: kanuki-core-0.1.0-20261127.120000-1.jar.
stamp=''
[ "$base" = "$version" ] || stamp='-[0-9]{8}\.[0-9]{6}-[0-9]+'
# Sets $found to the staged file of module $1 with suffix $2 (e.g. -sources.jar), or to nothing,
# and records what is missing: the file, its checksums, or checksums that do not match it.
find_staged() {
  local dir=$staging/dev/kanuki/$1/$version sum
  found=$(ls "$dir" 2>/dev/null | grep -E "^$1-${base//./\\.}(-SNAPSHOT|$stamp)${2//./\\.}\$" | tail -n 1 || true)
  if [ -z "$found" ]; then
    missing+=("$1: $1-$version$2")
    return
  fi
  for sum in sha1 md5; do
    if [ ! -f "$dir/$found.$sum" ]; then
      missing+=("$1: $found.$sum")
    elif [ "$(tr -d ' \n' <"$dir/$found.$sum" | cut -c1-40)" != "$(${sum}sum "$dir/$found" | cut -d' ' -f1)" ]; then
      missing+=("$1: $found.$sum does not match the file")
    fi
  done
  found=$dir/$found
}
for m in "${published[@]}"; do
  find_staged "$m" .pom
  [ -z "$found" ] && continue
  grep -q '<name>' "$found" && grep -q '<description>' "$found" || missing+=("$m: the deployed POM has no <name> or <description>")
  grep -q '<packaging>pom</packaging>' "$found" && continue
  find_staged "$m" .jar
  find_staged "$m" -sources.jar
  [ -z "$found" ] || grep -aq '\.java' "$found" || missing+=("$m: the sources jar holds no .java file")
  find_staged "$m" -javadoc.jar
  [ -z "$found" ] || grep -aq 'index\.html' "$found" || missing+=("$m: the javadoc jar holds no index.html")
done
for m in "${unpublished[@]}"; do
  [ ! -e "$staging/dev/kanuki/$m" ] || missing+=("$m: deployed, but it is not to be published (maven.deploy.skip)")
done
parent=$(ls "$staging/dev/kanuki/kanuki-parent/$version/"*.pom 2>/dev/null | tail -n 1 || true)
if [ -z "$parent" ]; then
  missing+=("kanuki-parent: its POM (every module's POM names it as parent)")
else
  for element in '<url>' '<licenses>' '<scm' '<organization>' '<developers>'; do
    grep -q "$element" "$parent" || missing+=("kanuki-parent: the deployed POM has no $element (Maven Central requires it)")
  done
fi
# The BOM lists exactly the published library modules.
listed=$(sed -n 's|.*<artifactId>\(kanuki-[a-z0-9-]*\)</artifactId>.*|\1|p' kanuki-bom/pom.xml | grep -vx 'kanuki-bom' | sort)
expected=$(for m in "${published[@]}"; do grep -q '<packaging>pom</packaging>' "$m/pom.xml" || echo "$m"; done | sort)
[ "$listed" = "$expected" ] || missing+=("kanuki-bom: lists [$(echo $listed)], the published library modules are [$(echo $expected)]")

if [ ${#missing[@]} -gt 0 ]; then
  printf '  missing: %s\n' "${missing[@]}" >&2
  fail "the staged release is incomplete (${#missing[@]} problems above; the staged files are in target/release-check/staging)"
fi
built_unpublished=()
for m in "${unpublished[@]}"; do
  [[ " ${not_built[*]} " == *" $m "* ]] || built_unpublished+=("$m")
done
step "staged: ${#published[@]} modules with pom, jar, sources, javadoc and checksums; built and absent: ${built_unpublished[*]:-none}; not built: ${not_built[*]:-none}"

# ------------------------------------------------------------------ 2. a user's first build
consumer=$work/consumer
mkdir -p "$consumer/src/main/java/example" "$work/locks"
{
  cat <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>first-lock</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
EOF
  # The README's block as it is, with its one version made this build's.
  sed "s|<version>[^<]*</version>|<version>$version</version>|" <<<"$snippet"
  cat <<'EOF'
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.0</version>
      </plugin>
      <plugin>
        <!-- runs the program (kanuki-cli's build uses the same plugin, so ~/.m2 has it) -->
        <groupId>org.codehaus.mojo</groupId>
        <artifactId>exec-maven-plugin</artifactId>
        <version>3.5.0</version>
        <executions>
          <execution>
            <phase>process-classes</phase>
            <goals><goal>exec</goal></goals>
            <configuration>
              <executable>${java.home}/bin/java</executable>
              <arguments>
                <argument>-classpath</argument>
                <classpath/>
                <argument>example.FirstLock</argument>
                <argument>${locks}</argument>
              </arguments>
              <outputFile>${project.build.directory}/first-lock.out</outputFile>
            </configuration>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
EOF
} >"$consumer/pom.xml"
cat >"$consumer/src/main/java/example/FirstLock.java" <<'EOF'
package example;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.LockBackendFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeSet;

/** Takes a lock in the directory given as the argument, prints its token, releases it. */
public final class FirstLock {
    public static void main(String[] args) {
        TreeSet<String> schemes = new TreeSet<>();
        ServiceLoader.load(LockBackendFactory.class).forEach(factory -> schemes.addAll(factory.schemes()));
        System.out.println("schemes " + String.join(" ", schemes));
        try (LockProvider locks = LockProvider.open("file:" + args[0])) {
            long first;
            try (LockHandle handle = locks.lock("first-lock").acquire(Duration.ofSeconds(10))) {
                first = handle.fencingToken();
                System.out.println("held first-lock token " + first);
            }
            Optional<LockHandle> again = locks.lock("first-lock").tryAcquire();
            System.out.println("released " + again.isPresent());
            again.ifPresent(handle -> {
                System.out.println("token rose " + (handle.fencingToken() > first));
                handle.close();
            });
        }
    }
}
EOF
step "building and running a consumer made from $readme's first xml block (log: target/release-check/consumer.log)"
if ! (cd "$consumer" && maven_offline_first "$work/consumer.log" process-classes -Dlocks="$work/locks"); then
  cat "$consumer/target/first-lock.out" 2>/dev/null >&2 || true
  tail -n 30 "$work/consumer.log" >&2
  fail "the consumer made from $readme's first xml block does not build against the installed artifacts, or its program failed; see target/release-check/consumer.log and target/release-check/consumer/pom.xml"
fi
cp "$consumer/target/first-lock.out" "$work/consumer.out"
out=$(cat "$work/consumer.out")
sed 's/^/  consumer: /' <<<"$out"
grep -Eq '^schemes .*\bfile\b' <<<"$out" && grep -Eq '^schemes .*\bredis\b' <<<"$out" \
  || fail "the consumer does not find the file: and redis:// backends on its class path"
grep -Eq '^held first-lock token [0-9]+$' <<<"$out" || fail "the consumer did not print the token of the lock it held"
grep -qx 'released true' <<<"$out" && grep -qx 'token rose true' <<<"$out" \
  || fail "after the consumer released its lock, it could not take it again with a higher token"

if command -v gradle >/dev/null 2>&1; then
  step "gradle is installed, but this check builds only the Maven consumer"
else
  step "gradle is not installed here: the README's Gradle snippet is not built"
fi
step "OK: the staged release is complete and a user's first build runs"
