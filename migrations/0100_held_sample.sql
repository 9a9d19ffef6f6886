-- What the write path reads of a held sample under an incoming uuid (health_store.incoming_samples):
-- its stored columns, its series' type and source, whether its type is of rule total, its export
-- context's members and whether it is marked deleted. The held copies of a batch are read in a
-- statement of their own, by the batch's uuids, and met with the batch's typed rows in memory
-- (docs/scaling.md: a statement that reads a person's table lists what it needs first).
CREATE TYPE health_store.held_sample AS (
  -- what it is and whether it counts
  uuid uuid, origin health_store.sample_origin, day date, is_total boolean, deleted boolean,
  -- its key and span
  type text, source text, grp text, kind text, id text,
  start_at timestamptz, end_at timestamptz, start_offset smallint, end_offset smallint,
  -- its values
  value double precision, unit text, category_name text, value_min double precision, value_max double precision,
  activity_type integer, activity_name text, duration_s double precision, distance_m double precision,
  energy_kcal double precision,
  -- the rest of it as stored: the payload, an imported record's context, its members and creation date
  payload jsonb, context bigint, members jsonb, created_s integer
);
COMMENT ON TYPE health_store.held_sample IS
  'A held sample under an incoming uuid as the write path compares it: its stored columns, its type and source, whether its type is of rule total, its export context''s members, whether it is marked deleted.';
