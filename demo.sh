#!/usr/bin/env bash
# The billing demo in one command, on a fresh clone with a JDK 17 and redis-server on the PATH
# (etcd-server too for --lock etcd): builds what it needs quietly, then runs the demo.
#
#   ./demo.sh                                 10 s, Redis lock, everything embedded
#   ./demo.sh --lock etcd --duration 5s       any flags of the demo; ./demo.sh --help lists them
#   ./demo.sh export-job --lose-after 3s      the long export job kept alive by the lease keeper
#   ./demo.sh quick-start examples/config/etcd.properties --embedded
#
# Exit code: the demo's (0 when every invariant held, 1 when one failed, 2 usage, 3 set-up).
set -euo pipefail
cd "$(dirname "$0")"

main=dev.warden.examples.billing.BillingDemo
case "${1:-}" in
  billing) shift ;;
  export-job) main=dev.warden.examples.export.ExportJob; shift ;;
  quick-start) main=dev.warden.examples.quickstart.QuickStart; shift ;;
esac

if ! command -v java >/dev/null 2>&1; then
  echo "demo.sh: java not found: install a JDK 17 (Debian/Ubuntu: apt-get install -y openjdk-17-jdk-headless)" >&2
  exit 3
fi

# Build the examples and the modules they need (no tests), and write their class path; skipped
# when nothing changed since the last build.
classpath=examples/target/classpath.txt
if [ ! -s "$classpath" ] || [ ! -d examples/target/classes ] \
    || [ -n "$(find pom.xml ./*/pom.xml ./*/src/main -newer "$classpath" -print -quit 2>/dev/null)" ]; then
  echo "Building the examples (the first build downloads Maven and the dependencies) ..." >&2
  rm -f "$classpath"
  if ! ./mvnw -q -B -ntp -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip -pl examples -am package \
      dependency:build-classpath \
      -Dmdep.outputFile=target/classpath.txt -DincludeScope=runtime >&2; then
    echo "demo.sh: the build failed (see above)" >&2
    exit 3
  fi
fi

exec java -cp "examples/target/classes:$(cat "$classpath")" -Dwarden.demo.dir=examples/target/warden-demo \
  "$main" "$@"
