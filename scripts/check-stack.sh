#!/usr/bin/env bash
# Validates the deployment stack without a Docker engine: compose file, Dockerfile inputs, Prometheus, Grafana dashboard.
# Installs docker-compose (1.29) and prometheus (for promtool) from Debian when missing; needs `npm ci` done first.
# Runs every check, prints "ok" or "FAIL" for each, and exits 1 if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
command -v docker-compose >/dev/null 2>&1 || packages+=(docker-compose)
command -v promtool >/dev/null 2>&1 || packages+=(prometheus)
if ((${#packages[@]})); then
  echo "check-stack: installing ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d: the prometheus package would otherwise try to start its own service.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
if [[ ! -d node_modules/yaml || ! -d node_modules/prom-client ]]; then
  echo "check-stack: run npm ci first (the dashboard check uses yaml and prom-client)" >&2
  exit 1
fi

failed=0
check() {
  local name=$1
  shift
  local out
  if out=$("$@" 2>&1); then
    echo "ok   $name"
  else
    echo "FAIL $name"
    printf '%s\n' "$out" | sed 's/^/     /'
    failed=$((failed + 1))
  fi
}

# Compose: schema, interpolation and references, with .env.example's values (an operator's own .env is neither read nor
# needed) and the grafana profile on, so its service is checked too.
check "docker-compose.yml (docker-compose config)" \
  docker-compose --project-directory . --file docker-compose.yml --env-file .env.example --profile grafana config -q

check "compose mounts and Dockerfile inputs exist" node scripts/check-stack-files.js

check "prometheus.yml (promtool check config)" promtool check config config/prometheus/prometheus.yml
check "alerts.yml (promtool check rules)" promtool check rules config/prometheus/alerts.yml
check "alerts.yml fire as expected (promtool test rules)" promtool test rules config/prometheus/alerts.test.yml
check "dashboard, alerts and docs queries: metric names, labels, PromQL" node scripts/check-stack-metrics.js

if ((failed)); then
  echo "check-stack: $failed check(s) failed"
  exit 1
fi
echo "check-stack: all checks passed"
