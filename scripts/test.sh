#!/usr/bin/env bash
# The body of `npm test`: brings up the real services the integration suites run against (Postgres,
# a Kafka broker from scripts/kafka.sh), then typechecks and runs vitest. Arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null && [[ -d /etc/postgresql ]]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
    for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
  else
    echo "test.sh: no Postgres on 127.0.0.1:5432 and none to start; set DATABASE_URL" >&2
  fi
fi
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

if [[ -z "${KAFKA_BROKERS:-}" ]]; then
  if started="$(bash scripts/kafka.sh start)"; then
    KAFKA_BROKERS="$(tail -n 1 <<<"$started")"
    export KAFKA_BROKERS="${KAFKA_BROKERS#KAFKA_BROKERS=}"
  else
    # the suites that need the broker fail, saying so (test/support/env.ts); a plain vitest run
    # without KAFKA_BROKERS skips them instead
    export KAFKA_SUITES_MISSING="scripts/kafka.sh could not start a broker (its reason is printed above the test run)"
    echo "test.sh: no Kafka broker: the suites that need it will fail" >&2
  fi
fi
echo "test.sh: DATABASE_URL=$DATABASE_URL KAFKA_BROKERS=$KAFKA_BROKERS" >&2

npx tsc --noEmit
npx tsc --noEmit -p app
npx tsc --noEmit -p test/app/usechat
# the browser suites (test/app/) load the app the gateway serves from app/dist
npm run --silent build:app
exec npx vitest run "$@"
