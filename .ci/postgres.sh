#!/usr/bin/env bash
# Starts a PostgreSQL server from Debian's `postgresql` package on 127.0.0.1 for the store
# tests and prints the admin URL the tests use (BENCHSMITH_TEST_PG_URL).
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
port=${BENCHSMITH_PG_PORT:-54329}
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version benchsmith$"; then
  pg_createcluster "$version" benchsmith -p "$port" -- --auth-local=trust --auth-host=scram-sha-256 >/dev/null
fi
pg_ctlcluster "$version" benchsmith start >/dev/null 2>&1 || pg_ctlcluster "$version" benchsmith status >/dev/null
su postgres -c "psql -q -p $port -c \"ALTER USER postgres PASSWORD 'benchsmith'\"" >/dev/null
echo "postgresql+psycopg://postgres:benchsmith@127.0.0.1:$port/postgres"
