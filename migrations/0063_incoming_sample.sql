-- The row the write path makes of each sample of a batch before it writes anything: the
-- sample's typed columns and what is held under its uuid (repeatable/30_store_batch.sql:
-- health_store.incoming_samples makes them, health_store.write_samples writes them).
CREATE TYPE health_store.incoming_sample AS (
  uuid          uuid,
  id            text,
  type          text,
  grp           text,
  kind          text,
  source        text,
  start_at      timestamptz,
  end_at        timestamptz,
  day           date,
  value         double precision,
  unit          text,
  category_name text,
  activity_type integer,
  activity_name text,
  duration_s    double precision,
  distance_m    double precision,
  energy_kcal   double precision,
  payload       jsonb,
  is_total      boolean,
  held          boolean,
  old_payload   jsonb,
  old_origin    text,
  old_day       date,
  old_type      text,
  old_source    text,
  old_start_at  timestamptz,
  old_end_at    timestamptz,
  old_is_total  boolean,
  old_deleted   boolean
);

COMMENT ON TYPE health_store.incoming_sample IS
  'A sample of a batch as the write path reads it: its typed columns, whether its uuid is held, and the held row''s payload, origin, key, span and deletion.';
