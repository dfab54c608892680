#!/bin/sh
# `npm start` (package.json: `exec sh scripts/start.sh`, so npm's child is this shell, which then
# becomes node): builds dist/ when a shipped source is newer than the last build
# (`node scripts/build.mjs --if-stale`), then replaces itself with `node dist/src/main.js` (exec: one
# process, which receives the signals itself; test/production/npm-start-signals.test.ts).
#
# `--help` / `-h` is answered without building (a stale build costs a compile, 45 s on a busy machine):
# by the last build when there is one, else by the sources under tsx (a development dependency).
set -e
for arg in "$@"; do
  case "$arg" in
    --help | -h)
      if [ -e dist/src/main.js ]; then exec node dist/src/main.js "$@"; fi
      exec node --import tsx src/main.ts "$@"
      ;;
  esac
done
node scripts/build.mjs --if-stale
exec node dist/src/main.js "$@"
