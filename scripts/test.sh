#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what the tests need, then lint, typecheck and test.
# Used by the README's quick start and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

npm ci --no-audit --no-fund
# Real etcd servers for the lab and the etcd tests: 3.4 (Debian 12) and 3.5 (Debian sid, extracted, cached).
bash scripts/install-etcd.sh
# Debian's chromium for the HTML report's browser test (src/audit/reporters/browser.real.test.ts).
bash scripts/install-chromium.sh
# A real S3 server (moto, Debian sid, extracted, cached) for the management-cluster backup tests.
bash scripts/install-moto.sh
# Debian's Alertmanager for the run's alert gates (src/run/signals.real.test.ts).
bash scripts/install-alertmanager.sh
# Debian's Prometheus for the run's SLO gates (src/adapters/prometheus/slo.real.test.ts).
bash scripts/install-prometheus.sh

npx biome check .
npx tsc -p tsconfig.json --noEmit
mkdir -p .ferry-cache
# A real-server suite whose binary (etcd, kubectl, chromium...) is missing fails instead of skipping
# (src/lab/testing-binaries.ts): a green run means every suite ran.
export FERRY_REQUIRE_REAL_SERVERS=1
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.ferry-cache/vitest.json "$@" || status=$?
# A plain closing line any CI can read.
node -e '
  const r = JSON.parse(require("fs").readFileSync(".ferry-cache/vitest.json", "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' || true
exit "$status"
