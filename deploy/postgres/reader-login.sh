#!/bin/sh
# Creates or updates the read-only login that Grafana and notebooks use: LOGIN, granted
# health_reader (USAGE on schema health, SELECT on its views; nothing on health_store), and
# read-only by default. Safe to run again: it changes the password and nothing else.
#
# compose.yaml runs it on every `up` (service reader-login). By hand, against any server:
#   PGHOST=… PGUSER=<an admin> PGDATABASE=health READER_LOGIN=grafana_reader \
#   READER_PASSWORD=… sh deploy/postgres/reader-login.sh
#
# Needs: psql, and libpq's PG* variables naming a role that may create roles.
set -eu

: "${READER_LOGIN:?set READER_LOGIN, the login to create}"
: "${READER_PASSWORD:?set READER_PASSWORD, its password}"

# Values go in as psql variables (:'…' quotes a literal, :"…" an identifier), never pasted
# into the SQL text. The heredoc is quoted, so the shell expands nothing inside it.
psql -X -q -v ON_ERROR_STOP=1 -v login="$READER_LOGIN" -v password="$READER_PASSWORD" <<'SQL'
-- The migrations create health_reader too (0001); whichever runs first makes it.
SELECT 'CREATE ROLE health_reader NOLOGIN'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'health_reader') \gexec
SELECT format('CREATE ROLE %I LOGIN', :'login')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'login') \gexec

ALTER ROLE :"login" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  INHERIT CONNECTION LIMIT 20 PASSWORD :'password';
-- A dashboard can neither write nor run away with the server.
ALTER ROLE :"login" SET default_transaction_read_only = on;
ALTER ROLE :"login" SET statement_timeout = '60s';
GRANT health_reader TO :"login";
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'login') \gexec
SQL

echo "reader-login: $READER_LOGIN can log in to ${PGDATABASE:-its database} with health_reader's rights (schema health, read-only)"
