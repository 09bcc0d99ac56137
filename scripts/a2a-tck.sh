#!/usr/bin/env bash
# The A2A Technology Compatibility Kit (v0.3) against the platform, as its run_tck.py runs each
# category. Starts one node on embedded defaults (PGlite, embedded log) in a temporary data
# directory, and a loopback proxy that adds the node's bootstrap workspace key (the TCK sends no
# credentials); runs the categories; prints each one's summary; exits non-zero on a failure that is
# not listed in EXPECTED below (each is explained in docs/a2a.md).
#
#   bash scripts/a2a-tck.sh                       # mandatory, capabilities, quality, features
#   A2A_TCK_CATEGORIES="mandatory" bash scripts/a2a-tck.sh
#
# A2A_TCK_DIR: the TCK's checkout (branch 0.3.x of a2aproject/a2a-tck), default ../shared/a2a-tck-0.3.x.
# It runs on Debian's python3 and packages: python3-pytest python3-pytest-asyncio python3-httpx
# python3-requests python3-responses python3-deepdiff python3-jsonschema python3-yaml python3-dotenv
# python3-grpcio python3-protobuf python3-openssl python3-packaging.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

TCK_DIR="${A2A_TCK_DIR:-$ROOT/../shared/a2a-tck-0.3.x}"
PYTHON="${A2A_TCK_PYTHON:-/usr/bin/python3}"
CATEGORIES="${A2A_TCK_CATEGORIES:-mandatory capabilities quality features}"

# Failures that depend on something outside the A2A spec; docs/a2a.md says why, test by test.
EXPECTED=(
)

log() { echo "a2a-tck.sh: $*" >&2; }

[[ -d "$TCK_DIR/tests" ]] || { log "no TCK at $TCK_DIR (set A2A_TCK_DIR)"; exit 1; }
"$PYTHON" -c 'import pytest, pytest_asyncio, httpx, requests, responses, deepdiff, jsonschema, yaml, dotenv, grpc, google.protobuf, OpenSSL, packaging' 2>/dev/null ||
  { log "$PYTHON lacks the TCK's packages (see the head of this script)"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/svc-a2a-tck.XXXXXX")"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'; }
wait_for() { # what, probe...
  local what="$1"; shift
  for _ in $(seq 1 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  log "timed out waiting for $what"; tail -n 40 "$WORK"/*.log >&2; exit 1
}

NODE_PORT="$(free_port)"
PROXY_PORT="$(free_port)"
PROXY_URL="http://127.0.0.1:$PROXY_PORT"

# embedded defaults: no DATABASE_URL, no KAFKA_BROKERS; the card names the proxy
env -u DATABASE_URL -u KAFKA_BROKERS HOST=127.0.0.1 PORT="$NODE_PORT" BASE_URL="$PROXY_URL" SVC_DATA_DIR="$WORK/data" \
  node --import tsx bin/main.ts >"$WORK/node.log" 2>&1 &
PIDS+=($!)
wait_for "the node on :$NODE_PORT" curl -sf "http://127.0.0.1:$NODE_PORT/healthz"
wait_for "the bootstrap key" test -s "$WORK/data/bootstrap.json"
KEY="$(node -p 'require(process.argv[1]).workspaceKey' "$WORK/data/bootstrap.json")"

A2A_PROXY_TARGET="http://127.0.0.1:$NODE_PORT" A2A_PROXY_KEY="$KEY" A2A_PROXY_PORT="$PROXY_PORT" \
  node --import tsx scripts/a2a-proxy.ts >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
wait_for "the proxy on :$PROXY_PORT" curl -sf "$PROXY_URL/.well-known/agent-card.json"

# the selections of the TCK's run_tck.py
declare -A PATHS=([mandatory]=tests/mandatory/ [capabilities]=tests/optional/capabilities/ [quality]=tests/optional/quality/ [features]=tests/optional/features/)
declare -A MARKERS=([mandatory]="mandatory_jsonrpc or mandatory_protocol")

SUMMARY=()
FAILED=()
for category in $CATEGORIES; do
  [[ -n "${PATHS[$category]:-}" ]] || { log "unknown category $category"; exit 1; }
  out="$WORK/$category.out"
  args=("${PATHS[$category]}" "--sut-url=$PROXY_URL/a2a" --test-scope=all --tb=short -q -rfE -p no:cacheprovider)
  [[ -n "${MARKERS[$category]:-}" ]] && args+=(-m "${MARKERS[$category]}")
  log "running $category"
  (cd "$TCK_DIR" && "$PYTHON" -m pytest "${args[@]}") >"$out" 2>&1 || true
  SUMMARY+=("$category: $(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$out" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')")
  while read -r id; do FAILED+=("$id"); done < <(sed -n '/short test summary info/,$p' "$out" | grep -E '^(FAILED|ERROR) ' | awk '{print $2}')
done

unexpected=()
for id in "${FAILED[@]}"; do
  [[ " ${EXPECTED[*]} " == *" $id "* ]] || unexpected+=("$id")
done
# an expected failure of a category that ran and passed: the list (and docs/a2a.md) may be stale
passed=()
for id in "${EXPECTED[@]}"; do
  for category in $CATEGORIES; do
    [[ "$id" == "${PATHS[$category]}"* && " ${FAILED[*]} " != *" $id "* ]] && passed+=("$id")
  done
done

echo "A2A TCK ($TCK_DIR) against the platform through $PROXY_URL:"
printf '  %s\n' "${SUMMARY[@]}"
((${#FAILED[@]} == 0)) || { echo "failed:"; printf '  %s\n' "${FAILED[@]}"; }
if ((${#unexpected[@]} > 0)); then
  echo "unexpected failures (output in the pytest logs below):"
  printf '  %s\n' "${unexpected[@]}"
  for category in $CATEGORIES; do sed -n '/= FAILURES =/,$p' "$WORK/$category.out"; done
  exit 1
fi
if ((${#passed[@]} > 0)); then
  echo "expected to fail, passed this time (if it keeps passing, drop it here and in docs/a2a.md):"
  printf '  %s\n' "${passed[@]}"
fi
