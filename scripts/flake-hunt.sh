#!/usr/bin/env bash
# The flake hunt: runs the process-level suites (faults, upstreams, ledger-archive, events, console) N times beside two
# CPU-busy loops, as a loaded CI machine would, and prints each failure with its run number, jest's seed, the failing
# tests' messages and the failing file's log. The busy loops, and a run under way (jest in a process group of its own,
# with the servers its tests started), are stopped however the hunt ends.
#
#   npm run test:flakes                       10 runs of the five suites
#   npm run test:flakes -- --runs 3           3 runs
#   npm run test:flakes -- --runs 2 test/faults/redis-faults.test.ts   a subset (any jest path patterns)
#
# Exit status 0 only when every run passed. Each run's full log stays under the directory it names.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=10
suites=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    *) suites+=("$1"); shift ;;
  esac
done
# Trailing slashes: jest's paths are patterns, and test/console alone would take test/console-api in too.
[ ${#suites[@]} -eq 0 ] && suites=(test/faults/ test/upstreams/ test/ledger-archive/ test/events/ test/console/)
case $runs in '' | *[!0-9]*) echo "flake-hunt: --runs wants a number, not '$runs'" >&2; exit 2 ;; esac

logs=$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt-XXXXXX")
busy=()
jest=
stop() {
  [ -n "$jest" ] && kill -- "-$jest" 2>/dev/null
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  busy=()
}
trap stop EXIT
trap 'stop; exit 130' INT TERM
for _ in 1 2; do
  node -e 'for (;;) {}' &
  busy+=($!)
done

echo "flake-hunt: ${runs} runs of ${suites[*]} beside two busy loops (pids ${busy[*]}); logs in ${logs}"
passed=0
for run in $(seq 1 "$runs"); do
  seed=$(( (RANDOM << 15 | RANDOM) ))
  log="$logs/run-$run.log"
  results="$logs/run-$run.json"
  start=$(date +%s)
  # Waited for in the background, so a signal to the hunt is handled at once rather than after the run.
  setsid node_modules/.bin/jest --maxWorkers=2 --seed="$seed" --json --outputFile="$results" "${suites[@]}" >"$log" 2>&1 &
  jest=$!
  wait "$jest"
  status=$?
  jest=
  took=$(( $(date +%s) - start ))
  if [ $status -eq 0 ]; then
    passed=$((passed + 1))
    echo "flake-hunt: run ${run} (seed ${seed}) passed in ${took} s"
    continue
  fi
  echo "flake-hunt: run ${run} (seed ${seed}) FAILED in ${took} s; full log: ${log}"
  # Each failing test's message, then the failing file's own section of the log (its console and stderr lines).
  node -e '
    const fs = require("fs");
    const [results, log] = process.argv.slice(1);
    let r;
    try { r = JSON.parse(fs.readFileSync(results, "utf8")); } catch { console.log("  (no results: jest itself failed; see the log)"); process.exit(0); }
    const text = fs.readFileSync(log, "utf8");
    for (const file of r.testResults.filter((f) => f.status !== "passed")) {
      const rel = file.name.slice(process.cwd().length + 1);
      console.log(`  FAIL ${rel}`);
      for (const t of file.assertionResults.filter((a) => a.status === "failed"))
        console.log(`    ✕ ${t.fullName}\n${t.failureMessages.join("\n").split("\n").slice(0, 12).map((l) => "      " + l).join("\n")}`);
      if (file.message && !file.assertionResults.some((a) => a.status === "failed")) console.log(file.message.split("\n").slice(0, 30).join("\n"));
      const at = text.indexOf(`FAIL ${rel}`);
      if (at >= 0) {
        const rest = text.slice(at);
        const end = rest.slice(1).search(/\n(PASS|FAIL) /) + 1;
        const section = (end > 0 ? rest.slice(0, end) : rest).split("\n");
        console.log(`  --- its log (${section.length} lines, the last 80) ---\n${section.slice(-80).join("\n")}`);
      }
    }
  ' "$results" "$log"
done
echo "flake-hunt: ${passed} of ${runs} runs passed"
[ "$passed" -eq "$runs" ]
