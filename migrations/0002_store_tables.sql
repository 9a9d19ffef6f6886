-- The tables behind the views. Every key starts with person, so the data could one day be
-- distributed by person.

-- The 24 sample types of the healthd v1 reference, and the per-day rule each one follows.
CREATE TABLE health_store.catalog (
  type     text PRIMARY KEY,
  grp      text NOT NULL,
  kind     text NOT NULL CHECK (kind IN ('quantity', 'category', 'workout')),
  unit     text,
  metric   text NOT NULL UNIQUE,
  rule     text NOT NULL CHECK (rule IN ('total', 'sleep', 'reading', 'latest', 'workout')),
  position smallint NOT NULL UNIQUE
);

-- One row per sample held: the latest copy per (person, uuid).
CREATE TABLE health_store.samples (
  person            text NOT NULL,
  uuid              uuid NOT NULL,
  id                text NOT NULL,
  type              text NOT NULL,
  grp               text NOT NULL,
  kind              text NOT NULL,
  source            text NOT NULL,
  start_at          timestamptz NOT NULL,
  end_at            timestamptz NOT NULL,
  -- Local date of start (sleep: of end) in the person's time zone, or in the sample's
  -- written offset when none is set. Stored at write time so views never convert.
  day               date NOT NULL,
  value             double precision,
  unit              text,
  category_name     text,
  activity_type     integer,
  activity_name     text,
  duration_s        double precision,
  distance_m        double precision,
  energy_kcal       double precision,
  payload           jsonb NOT NULL,
  first_received_at timestamptz NOT NULL,
  last_received_at  timestamptz NOT NULL,
  export_id         uuid,
  PRIMARY KEY (person, uuid)
);
-- Rollup upkeep and recompute read one (person, type, day, source) at a time.
CREATE INDEX samples_person_type_day_source ON health_store.samples (person, type, day, source);
-- Freshness: the newest sample end per person.
CREATE INDEX samples_person_end ON health_store.samples (person, end_at);
-- Workouts are few; the workout list and its overlap check read only them.
CREATE INDEX samples_person_workouts ON health_store.samples (person, start_at) WHERE kind = 'workout';

-- One row per accepted request or file batch, retries included.
CREATE TABLE health_store.deliveries (
  person          text NOT NULL,
  delivery_id     bigint GENERATED ALWAYS AS IDENTITY,
  received_at     timestamptz NOT NULL,
  origin          text NOT NULL CHECK (origin IN ('http', 'file')),
  format          text NOT NULL CHECK (format IN ('json', 'csv')),
  export_id       uuid NOT NULL,
  batch_sequence  integer NOT NULL,
  is_final        boolean NOT NULL,
  basis           text NOT NULL,
  window_start    timestamptz NOT NULL,
  window_end      timestamptz NOT NULL,
  occasion_start  timestamptz NOT NULL,
  occasion_end    timestamptz NOT NULL,
  generated_at    timestamptz NOT NULL,
  samples         integer NOT NULL,
  inserted        integer NOT NULL,
  duplicates      integer NOT NULL,
  replaced        integer NOT NULL,
  quarantined     integer NOT NULL,
  body_sha256     bytea NOT NULL,
  file            text,
  PRIMARY KEY (person, delivery_id)
);
CREATE INDEX deliveries_person_received ON health_store.deliveries (person, received_at);
CREATE INDEX deliveries_person_export ON health_store.deliveries (person, export_id, batch_sequence);

-- Samples that broke the contract, kept verbatim with the reason; their batch was stored.
CREATE TABLE health_store.quarantine (
  person       text NOT NULL,
  delivery_id  bigint NOT NULL,
  position     integer NOT NULL,
  reason       text NOT NULL,
  raw          text NOT NULL,
  PRIMARY KEY (person, delivery_id, position),
  FOREIGN KEY (person, delivery_id) REFERENCES health_store.deliveries (person, delivery_id)
);

-- Per-person settings. No row means: no time zone (days from written offsets), stale after 6 h.
CREATE TABLE health_store.settings (
  person       text PRIMARY KEY,
  time_zone    text,
  stale_after  interval NOT NULL DEFAULT interval '6 hours' CHECK (stale_after > interval '0')
);

-- A fixed source order for a type, replacing the largest-total rule.
CREATE TABLE health_store.source_priorities (
  person   text NOT NULL,
  type     text NOT NULL,
  sources  text[] NOT NULL CHECK (cardinality(sources) > 0),
  PRIMARY KEY (person, type)
);

-- Receiver credentials, stored only as the SHA-256 of the token.
CREATE TABLE health_store.tokens (
  person        text NOT NULL,
  token_id      bigint GENERATED ALWAYS AS IDENTITY,
  label         text,
  token_sha256  bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  PRIMARY KEY (person, token_id)
);
