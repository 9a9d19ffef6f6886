-- Schemas and the read-only role.
--
-- health        the public, read-only interface: views and a few functions.
-- health_store  tables; nobody's interface, never granted to readers.
-- health_reader a NOLOGIN role; a Grafana or notebook login is granted it.

CREATE SCHEMA IF NOT EXISTS health;
CREATE SCHEMA IF NOT EXISTS health_store;

COMMENT ON SCHEMA health IS
  'Health Warehouse public interface: read-only views over the stored Apple Health samples, and settings functions. Grant health_reader to read it.';
COMMENT ON SCHEMA health_store IS
  'Health Warehouse storage tables. Not an interface: read the views in schema health instead.';

-- Roles are cluster-wide, so another database of the same cluster may have made it already.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'health_reader') THEN
    CREATE ROLE health_reader NOLOGIN;
  END IF;
END
$$;

REVOKE ALL ON SCHEMA health_store FROM PUBLIC;
REVOKE ALL ON SCHEMA health FROM PUBLIC;
GRANT USAGE ON SCHEMA health TO health_reader;
