#!/bin/sh
# Creates or updates the role the warehouse connects as: it owns schemas health and
# health_store and everything in them, and is a member of health_reader, and nothing more.
# LOGIN, but no SUPERUSER, CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS. The membership lets
# serve's page (/ui) read through connections that SET ROLE health_reader, so the page can
# only read the views (docs/ui.md). Safe to run again: it sets the password and hands the
# two schemas' objects to the owner where someone else owns them (an upgrade from a deployment
# that migrated as the superuser, or a `pg_restore --no-owner` run as it); when everything is
# already the owner's, it takes no lock on any table.
#
# compose.yaml runs it on every `up` (service owner-role), before the warehouse starts. By hand,
# against any server:
#   PGHOST=… PGUSER=<a superuser> PGDATABASE=health OWNER_LOGIN=health_owner \
#   OWNER_PASSWORD=… sh deploy/postgres/owner-role.sh
#
# Needs: psql, and libpq's PG* variables naming a superuser (it changes objects' owners).
set -eu

: "${OWNER_LOGIN:?set OWNER_LOGIN, the role the warehouse connects as}"
: "${OWNER_PASSWORD:?set OWNER_PASSWORD, its password}"

# Values go in as psql variables (:'…' quotes a literal, :"…" an identifier), never pasted
# into the SQL text; the DO block reads the name from a setting. The heredoc is quoted, so
# the shell expands nothing inside it.
psql -X -q -v ON_ERROR_STOP=1 -v owner="$OWNER_LOGIN" -v password="$OWNER_PASSWORD" <<'SQL'
-- The owner may not create roles, so health_reader (migration 0001 creates it only when it is
-- missing) must exist before the first migration runs as the owner.
SELECT 'CREATE ROLE health_reader NOLOGIN'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'health_reader') \gexec
-- Likewise health_sql_reader (migration 0101), the role the assistant's query runs as: a member
-- of health_reader, and of nobody but the owner, who hands it health.query_as_reader.
SELECT 'CREATE ROLE health_sql_reader NOLOGIN'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'health_sql_reader') \gexec
GRANT health_reader TO health_sql_reader;
SELECT format('CREATE ROLE %I LOGIN', :'owner')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'owner') \gexec

ALTER ROLE :"owner" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  INHERIT PASSWORD :'password';
GRANT health_reader TO :"owner";
GRANT health_sql_reader TO :"owner";
-- CREATE on the database: the migrator and migration 0001 run `CREATE SCHEMA IF NOT EXISTS`,
-- and PostgreSQL checks that privilege before it looks whether the schema exists.
SELECT format('GRANT CONNECT, CREATE ON DATABASE %I TO %I', current_database(), :'owner') \gexec

SELECT set_config('health_warehouse.owner', :'owner', false) AS owner_setting \gset
DO $$
DECLARE
  owner_name text := current_setting('health_warehouse.owner');
  owner_oid oid := (SELECT oid FROM pg_roles WHERE rolname = owner_name);
  item record;
BEGIN
  FOR item IN
    SELECT n.nspname FROM pg_namespace n
    WHERE n.nspname IN ('health', 'health_store') AND n.nspowner <> owner_oid
  LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', item.nspname, owner_name);
  END LOOP;
  -- Tables, views, materialized views and free-standing sequences (an identity column's
  -- sequence follows its table).
  FOR item IN
    SELECT c.oid::regclass AS name,
           CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                          WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname IN ('health', 'health_store') AND c.relowner <> owner_oid
      AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
      AND NOT (c.relkind = 'S' AND EXISTS (
            SELECT 1 FROM pg_depend d
            WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
              AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
    ORDER BY c.relkind = 'S', c.oid
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', item.kind, item.name, owner_name);
  END LOOP;
  FOR item IN
    SELECT p.oid::regprocedure AS name,
           CASE p.prokind WHEN 'a' THEN 'AGGREGATE' WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname IN ('health', 'health_store') AND p.proowner <> owner_oid
      -- health.query_as_reader runs as its owner, health_sql_reader, on purpose (75_assistant.sql).
      AND p.proowner <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'health_sql_reader')
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', item.kind, item.name, owner_name);
  END LOOP;
  -- Composite types, domains, enums and ranges of their own (a table's row type and an
  -- array type follow their table or element type).
  FOR item IN
    SELECT t.oid::regtype AS name, CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END AS kind
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname IN ('health', 'health_store') AND t.typowner <> owner_oid
      AND (t.typtype IN ('d', 'e', 'r')
           OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c'))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', item.kind, item.name, owner_name);
  END LOOP;
END
$$;
SQL

echo "owner-role: $OWNER_LOGIN owns schemas health and health_store in ${PGDATABASE:-its database}, without superuser rights, and may SET ROLE health_reader"
