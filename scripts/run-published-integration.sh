#!/usr/bin/env bash
# Runs the operator's PUBLISHED end-to-end suite (jup-ag/rfq-webhook-toolkit, tests/suites/integration:
# order, sign with @solana/kit, append a Lighthouse assertion, execute), as published, against
# `npm run sandbox` (the operator simulator stands in for the operator's order/execute API). Nothing of
# the toolkit is copied into this repository: its tests/ folder is exported to a scratch directory
# outside it and its own package.json is installed there from the npm registry.
#
#   scripts/run-published-integration.sh <toolkit> [scratch-dir]
#
# <toolkit>: a clone of the toolkit (working tree or bare git dir). Ports: CHAIN_PORT (18899),
# WEBHOOK_PORT (18080), OPERATOR_PORT (18090). The taker is the sandbox's funded taker 1.
set -euo pipefail

usage() { printf '%b\n' "usage: npm run integration:published -- <toolkit clone or git dir> [scratch-dir]\n\nRuns the operator's published end-to-end suite, as published, against npm run sandbox\n(ports: CHAIN_PORT, WEBHOOK_PORT, OPERATOR_PORT; from a scratch dir outside the repository)."; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  -*) echo "$(basename "$0"): unknown flag $1; known flags: -h, --help" >&2; usage >&2; exit 64 ;;
  "") usage >&2; exit 64 ;;
esac

toolkit=${1:?usage: $0 <toolkit checkout or git dir> [scratch-dir]}
scratch=${2:-$(mktemp -d -t rfq-toolkit-XXXXXX)}
repo=$(cd "$(dirname "$0")/.." && pwd)
export CHAIN_PORT=${CHAIN_PORT:-18899} WEBHOOK_PORT=${WEBHOOK_PORT:-18080} OPERATOR_PORT=${OPERATOR_PORT:-18090}

# shellcheck source=scripts/published-toolkit.sh
. "$repo/scripts/published-toolkit.sh"
export_toolkit_tests "$toolkit" "$scratch" "$repo"

log="$scratch/sandbox.log"
echo "starting npm run sandbox (log: $log)"
# Its own process group (setsid), so that stopping it stops npm and everything under it.
(cd "$repo" && exec setsid npm run sandbox) >"$log" 2>&1 &
sandbox=$!
trap 'kill -TERM -- -"$sandbox" 2>/dev/null || true; wait "$sandbox" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  grep -q "sandbox ready" "$log" && break
  kill -0 "$sandbox" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 1
done

cd "$scratch/tests"
QUOTE_SERVICE_URL="http://127.0.0.1:$OPERATOR_PORT/ultra/v1" WEBHOOK_ID=sandbox \
  TAKER_KEYPAIR="$repo/data/sandbox/taker-1-keypair.json" npx vitest run ./suites/integration
