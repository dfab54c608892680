#!/usr/bin/env bash
# Runs the operator's PUBLISHED acceptance suite (jup-ag/rfq-webhook-toolkit, tests/suites/acceptance),
# as published, twice against one `ACCEPTANCE_MODE=1 npm start` instance. Nothing of the toolkit is
# copied into this repository: its tests/ folder is exported to a scratch directory outside it and
# its own package.json is installed there from the npm registry.
#
#   scripts/run-published-acceptance.sh <toolkit> [scratch-dir] [port]
#
# <toolkit>: a clone of the toolkit (working tree or bare git dir), e.g.
#   git clone https://github.com/jup-ag/rfq-webhook-toolkit /tmp/rfq-webhook-toolkit
# scratch-dir defaults to a new temporary directory; port defaults to 18480.
# Exits non-zero unless both runs pass.
set -euo pipefail

usage() {
  cat <<USAGE
usage: npm run acceptance:published -- <toolkit> [scratch-dir] [port]

Runs the operator's published acceptance suite (jup-ag/rfq-webhook-toolkit, tests/suites/acceptance),
as published, twice against one ACCEPTANCE_MODE=1 instance started here. <toolkit> is a clone of the
toolkit (working tree or bare git dir); its tests/ folder is exported to scratch-dir (default: a new
temporary directory outside the repository) and installed there. port defaults to 18480.
Exits non-zero unless both runs pass.

flags:
  -h, --help  print this help and exit
USAGE
}
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  -*) echo "npm run acceptance:published: unknown flag $1; known flags: -h, --help" >&2; usage >&2; exit 64 ;;
  "") usage >&2; exit 64 ;;
esac

toolkit=${1:?usage: $0 <toolkit checkout or git dir> [scratch-dir] [port]}
scratch=${2:-$(mktemp -d -t rfq-toolkit-XXXXXX)}
port=${3:-18480}
repo=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=scripts/published-toolkit.sh
. "$repo/scripts/published-toolkit.sh"
export_toolkit_tests "$toolkit" "$scratch" "$repo"

data=$(mktemp -d -t rfq-acceptance-data-XXXXXX)
log="$scratch/webhook.log"
echo "starting ACCEPTANCE_MODE=1 npm start on 127.0.0.1:$port (log: $log)"
# Its own process group (setsid), so that stopping it stops npm and the node process under it.
(cd "$repo" && exec setsid env ACCEPTANCE_MODE=1 PORT="$port" HOST=127.0.0.1 DATA_DIR="$data" \
  LOG_LEVEL=warn npm start) >"$log" 2>&1 &
server=$!
trap 'kill -- -"$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT

for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.5
done

status=0
for run in 1 2; do
  echo "--- run $run"
  (cd "$scratch/tests" && WEBHOOK_URL="http://127.0.0.1:$port" npx vitest run ./suites/acceptance) || status=1
done
exit $status
