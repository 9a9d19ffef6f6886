-- The role health.query_as_reader runs as (75_assistant.sql): health_sql_reader, a member of
-- health_reader, so the assistant's query reads exactly what health_reader reads. It owns that
-- function instead of health_reader because whoever is a member of a function's owner may
-- alter or drop it, and every Grafana or notebook login is a member of health_reader; nobody
-- is given health_sql_reader but the warehouse's owner (who must be a member to hand it the
-- function). NOLOGIN (on Citus, migrate lets it log in: docs/scaling.md).
--
-- Roles are cluster-wide: another database of the cluster, or deploy/postgres/owner-role.sh for
-- an owner that may not create roles, may have made it already.
DO $$
DECLARE
  may_create boolean := (SELECT r.rolsuper OR r.rolcreaterole FROM pg_roles r WHERE r.rolname = current_user);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'health_sql_reader') THEN
    IF NOT may_create THEN
      RAISE EXCEPTION 'role health_sql_reader does not exist, and % may not create roles', current_user
        USING HINT = format('run deploy/postgres/owner-role.sh, or as a superuser: CREATE ROLE health_sql_reader NOLOGIN; '
                            'GRANT health_reader TO health_sql_reader; GRANT health_sql_reader TO %I;', current_user);
    END IF;
    CREATE ROLE health_sql_reader NOLOGIN;
  END IF;
  IF NOT pg_has_role('health_sql_reader', 'health_reader', 'USAGE') THEN
    GRANT health_reader TO health_sql_reader;
  END IF;
  IF NOT pg_has_role(current_user, 'health_sql_reader', 'MEMBER') THEN
    EXECUTE format('GRANT health_sql_reader TO %I', current_user);
  END IF;
  -- A role's comment takes the right to create roles.
  IF may_create THEN
    COMMENT ON ROLE health_sql_reader IS
      'The role health.query_as_reader (the assistant''s sql tool) runs as: health_reader''s rights, owning the function so that no reader login can alter it. Grant it to nobody but the warehouse''s owner.';
  END IF;
END
$$;
