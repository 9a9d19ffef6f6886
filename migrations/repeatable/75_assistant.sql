-- The assistant's free query (the `sql` tool of `health-warehouse mcp --allow-sql`,
-- docs/assistant.md): one read-only query over the views of schema health, run as
-- health_reader in a way the query itself cannot undo.
--
-- Setting role health_reader is not enough on its own: SET ROLE is checked against the
-- session's login, so a query run by the warehouse's owner (or a superuser) could call
-- set_config('role', 'none', true) and read health_store. Inside a SECURITY DEFINER function
-- PostgreSQL refuses to change role or session authorization at all, so the query runs
-- here, in a function owned by health_sql_reader, a member of health_reader (migration 0101):
-- it can read exactly what health_reader reads, and no reader login, which is a member of
-- health_reader but not of health_sql_reader, may alter or drop it.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

CREATE OR REPLACE FUNCTION health.query_as_reader(query text, max_rows integer)
RETURNS SETOF json
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  -- The query as a subquery in FROM, to check it: that takes one SELECT (or VALUES, TABLE)
  -- only: no second statement, no data-modifying WITH; the line break ends a trailing `--`
  -- comment.
  wrapped text := 'SELECT row_to_json(q) FROM (' || query || E'\n) q LIMIT ' || (max_rows + 1);
  plan jsonb;
  outside text;
  found_row record;
  rows_sent integer := 0;
BEGIN
  -- Unqualified names are the views'; the SET clause above restores the caller's path after.
  PERFORM set_config('search_path', 'health, pg_catalog, pg_temp', true);
  -- Every relation the plan scans must be a view of schema health or what such a view reads
  -- (health_store, which health_reader may not name itself: EXPLAIN checks that first).
  EXECUTE 'EXPLAIN (VERBOSE, FORMAT JSON) ' || wrapped INTO plan;
  SELECT string_agg(DISTINCT (n ->> 'Schema') || '.' || (n ->> 'Relation Name'), ', ')
    INTO outside
    FROM jsonb_path_query(plan, 'strict $.** ? (exists (@."Relation Name"))') AS n
   WHERE n ->> 'Schema' NOT IN ('health', 'health_store');
  IF outside IS NOT NULL THEN
    RAISE EXCEPTION 'the query reads %: only the views of schema health may be read', outside
      USING ERRCODE = '42501';
  END IF;
  -- The rows come from the query run alone, once the wrapped one proved it one read-only
  -- SELECT over those relations (text that parses both as that subquery and alone is the same
  -- statement): a subquery's ORDER BY does not order the rows around it, and Citus, pushing the
  -- subquery to the shards, returned them in the shards' order.
  FOR found_row IN EXECUTE query || E'\n' LOOP
    RETURN NEXT row_to_json(found_row);
    rows_sent := rows_sent + 1;
    EXIT WHEN rows_sent > max_rows;
  END LOOP;
END
$$;

COMMENT ON FUNCTION health.query_as_reader(text, integer) IS
  'Runs one read-only query (a SELECT, VALUES or TABLE) over the views of schema health with health_reader''s rights (as health_sql_reader), which the query cannot switch away from, and returns its rows as JSON objects, at most max_rows + 1 of them (one more than asked tells the caller there were more). A query reading a relation of another schema is refused. Call it inside a read-only transaction with a statement_timeout.';

-- Owned by health_sql_reader, so it runs with health_reader's rights: giving it to that role
-- needs CREATE on the schema for a moment (PostgreSQL checks the new owner may create there).
GRANT CREATE ON SCHEMA health TO health_sql_reader;
ALTER FUNCTION health.query_as_reader(text, integer) OWNER TO health_sql_reader;
REVOKE CREATE ON SCHEMA health FROM health_sql_reader;
REVOKE ALL ON FUNCTION health.query_as_reader(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health.query_as_reader(text, integer) TO health_reader;
