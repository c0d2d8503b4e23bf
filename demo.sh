#!/usr/bin/env bash
# The billing demo in one command, on a fresh clone with a JDK 17 and redis-server on the PATH
# (etcd-server too for --lock etcd): builds what it needs quietly, then runs the demo.
#
#   ./demo.sh                                 10 s, Redis lock, everything embedded
#   ./demo.sh --lock etcd --duration 5s       any flags of the demo; ./demo.sh --help lists them
#   ./demo.sh export-job --lose-after 3s      the long export job kept alive by the lease keeper
#   ./demo.sh quick-start examples/config/etcd.properties --embedded
#   ./demo.sh example charge examples/config/quota/billing.properties merchant-42 5
#                                             a copyable example (quickstart, charge, export or ledger)
#                                             against the servers its settings file names
#
# The demos are test code of the examples module (examples/src/test/java/dev/warden/examples/demo):
# they launch servers with testkit, make load, check invariants and set the exit code around the
# copyable programs of examples/src/main, so they run on the module's test class path.
#
# Exit code: the demo's (0 when every invariant held, 1 when one failed, 2 usage, 3 set-up).
set -euo pipefail
cd "$(dirname "$0")"

main=dev.warden.examples.demo.BillingDemo
case "${1:-}" in
  billing) shift ;;
  export-job) main=dev.warden.examples.demo.ExportJobDemo; shift ;;
  quick-start) main=dev.warden.examples.demo.QuickStartDemo; shift ;;
  example)
    case "${2:-}" in
      quickstart) main=dev.warden.examples.quickstart.QuickStart ;;
      charge) main=dev.warden.examples.charge.ChargeMerchant ;;
      export) main=dev.warden.examples.export.ExportJob ;;
      ledger) main=dev.warden.examples.ledger.LedgerSync ;;
      *)
        echo "usage: ./demo.sh example quickstart|charge|export|ledger <settings file> [arguments]" >&2
        exit 2 ;;
    esac
    shift 2 ;;
esac

if ! command -v java >/dev/null 2>&1; then
  echo "demo.sh: java not found: install a JDK 17 (Debian/Ubuntu: apt-get install -y openjdk-17-jdk-headless)" >&2
  exit 3
fi

# Build the examples with their test classes and the modules they need (no tests run), and write the
# test class path; skipped when nothing changed since the last build.
classpath=examples/target/classpath.txt
if [ ! -s "$classpath" ] || [ ! -d examples/target/classes ] || [ ! -d examples/target/test-classes ] \
    || [ -n "$(find pom.xml ./*/pom.xml ./*/src/main examples/src/test -newer "$classpath" -print -quit 2>/dev/null)" ]; then
  echo "Building the examples (the first build downloads Maven and the dependencies) ..." >&2
  rm -f "$classpath"
  if ! ./mvnw -q -B -ntp -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip -pl examples -am package \
      dependency:build-classpath \
      -Dmdep.outputFile=target/classpath.txt -DincludeScope=test >&2; then
    echo "demo.sh: the build failed (see above)" >&2
    exit 3
  fi
fi

exec java -cp "examples/target/classes:examples/target/test-classes:$(cat "$classpath")" \
  -Dwarden.demo.dir=examples/target/warden-demo "$main" "$@"
