#!/usr/bin/env bash
# The production image's runtime stage, rehearsed without Docker (no daemon on the project's machines):
# a scratch folder gets what the Dockerfile's runtime stage gets (package.json, package-lock.json,
# `npm ci --omit=dev --ignore-scripts`, the compiled dist/), then:
#   1. the tree has no tsx, esbuild, LiteSVM, Biome, Vitest or bigint-buffer addon; its *.node files are
#      the allowlisted ones (native-addons.json);
#   2. `node dist/src/main.js` without RPC_URL stops at once with the line naming the missing local chain;
#   3. in production mode (RPC_URL at `npm run chain`'s local chain server, a maker key file, a
#      throwaway Redis, API_KEY) it starts under `tini --` (as PID 1 of its own PID namespace when
#      `unshare` allows, as in the container), answers /health, and exits 0 on SIGTERM.
# Needs network access to the npm registry, redis-server, curl and tini (the image's init; Debian:
# `apt-get install -y tini`): a missing one is named before anything starts. Prints what it checked.
# Whatever happens (a failed check, an error, Ctrl-C), what it started is stopped and its scratch
# folder removed.
#
#   bash scripts/image-rehearsal.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

missing=()
for cmd in tini redis-server curl; do command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "FAIL: not found: ${missing[*]} (the image's runtime stage runs node under tini; step 3 needs a throwaway redis-server and curl)." >&2
  echo "      Debian/Ubuntu: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

WORK=$(mktemp -d /tmp/image-rehearsal-XXXXXX)
PIDS=()
cleanup() {
  # Each background child is a process of its own (no npx or shell in between), stopped by its PID;
  # then SIGKILL for any that did not stop within 5 s.
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== build stage: npm run build"
node scripts/build.mjs --if-stale
echo "== runtime stage in $WORK/app: npm ci --omit=dev --ignore-scripts, then dist/"
mkdir -p "$WORK/app"
cp package.json package-lock.json "$WORK/app/"
(cd "$WORK/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >"$WORK/npm-ci.log" 2>&1) ||
  { cat "$WORK/npm-ci.log"; exit 1; }
cp -r dist "$WORK/app/dist"

echo "== 1. what the image contains"
for p in tsx esbuild litesvm @biomejs/biome vitest vite; do
  if [ -e "$WORK/app/node_modules/$p" ]; then echo "FAIL: node_modules/$p is in the image"; exit 1; fi
  echo "   absent: $p"
done
# typescript is there as a declared peer of @solana/codecs 2.x (npm installs peers); nothing loads it.
[ -e "$WORK/app/node_modules/typescript" ] && echo "   present: typescript (peer of @solana/codecs; never loaded)"
for f in $(cd "$WORK/app" && find node_modules -path '*/bigint-buffer/package.json'); do
  grep -q '"name": "@exodus/bigint-buffer"' "$WORK/app/$f" || { echo "FAIL: $f is not the pure-JS replacement"; exit 1; }
  echo "   ${f%/package.json} is @exodus/bigint-buffer (pure JS)"
done
echo "   *.node files:"
(cd "$WORK/app" && find node_modules -name '*.node' | sed 's/^/     /')
du -sh "$WORK/app/node_modules" | sed 's/^/   node_modules: /'

echo "== 2. no RPC_URL: the paper setup's local chain is not in the image"
set +e
out=$(cd "$WORK/app" && NODE_ENV=production DATA_DIR="$WORK/data" PORT=0 ADMIN_PORT=0 node dist/src/main.js 2>&1)
code=$?
set -e
echo "$out" | sed 's/^/   /'
[ "$code" -eq 78 ] && echo "$out" | grep -q "litesvm" || { echo "FAIL: expected exit 78 naming litesvm, got $code"; exit 1; }
echo "   exit $code"

echo "== 3. production mode under tini, SIGTERM"
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
CHAIN_PORT=$(free_port)
mkdir -p "$WORK/data"
cat >"$WORK/chain.json" <<EOF
{ "host": "127.0.0.1", "port": $CHAIN_PORT, "slotMs": 400, "blockhashValidity": 150,
  "maker": { "keypair": "$WORK/maker.json", "sol": "100000000000",
             "inventory": { "SOL": "10000000000000", "USDC": "10000000000000" } },
  "takers": [] }
EOF
# node itself in the background (not npx, whose child would outlive a kill of npx).
CHAIN_SEED="$WORK/chain.json" node --import tsx sandbox/chain/main.ts >"$WORK/chain.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 150); do grep -q "$CHAIN_PORT" "$WORK/chain.log" 2>/dev/null && break; sleep 0.2; done
grep -q "$CHAIN_PORT" "$WORK/chain.log" || { echo "FAIL: the local chain server did not start:"; tail -20 "$WORK/chain.log"; exit 1; }
chmod 600 "$WORK/maker.json"
PORT=$(free_port)
INIT=(tini --)
if unshare --pid --fork --kill-child true 2>/dev/null; then INIT=(unshare --pid --fork --kill-child tini --); fi
(cd "$WORK/app" && exec env -i PATH="$PATH" NODE_ENV=production DATA_DIR="$WORK/data" PORT="$PORT" HOST=127.0.0.1 ADMIN_PORT=0 ALLOW_STATIC_PRICES=1 ALLOW_EMBEDDED_LEDGER=1 \
  RPC_URL="http://127.0.0.1:$CHAIN_PORT" MAKER_KEYPAIR="$WORK/maker.json" REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
  API_KEY=rehearsal-api-key-0123456789 "${INIT[@]}" node dist/src/main.js) >"$WORK/service.log" 2>&1 &
SVC=$!
PIDS+=("$SVC")
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  kill -0 "$SVC" 2>/dev/null || break
  sleep 0.2
done
echo "   started with: ${INIT[*]} node dist/src/main.js"
health=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health" || true)
echo "   /health: $health"
if [ "$health" != 200 ]; then
  if kill -0 "$SVC" 2>/dev/null; then echo "FAIL: no answer on /health within 30 s; its log ends:"; else echo "FAIL: the service exited before it answered /health; its log ends:"; fi
  tail -20 "$WORK/service.log" | sed 's/^/   /'
  exit 1
fi
TARGET=$SVC
if [ "${INIT[0]}" = unshare ]; then TARGET=$(cat "/proc/$SVC/task/$SVC/children" | awk '{print $1}'); fi
echo "   SIGTERM to PID $TARGET ($(tr '\0' ' ' <"/proc/$TARGET/cmdline" | cut -c1-40))"
kill -TERM "$TARGET"
set +e
wait "$SVC"
code=$?
set -e
grep -o '"msg":"shutting down"' "$WORK/service.log" | head -1 | sed 's/^/   log: /'
echo "   exit $code"
if curl -s "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then echo "FAIL: still serving"; exit 1; fi
[ "$code" -eq 0 ] || { echo "FAIL: exit $code"; tail -20 "$WORK/service.log"; exit 1; }
echo "image rehearsal: ok"
