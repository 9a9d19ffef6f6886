-- Rollup level 2: per person, type and local day, the day value by the type's rule (table
-- health_store.rollup_day_type, migration 0010), computed from level 1.
--
-- Per-source winner (rules total and sleep): a fixed priority first (listed sources before
-- unlisted), then the largest total, then the source that sorts first in byte order; rank 1
-- wins, the others are the alternatives. Readings: min, mean and max across sources. Latest:
-- the latest sample across sources. Workouts: count and sums.
--
-- Sleep: a source with no minute asleep (an iPhone alone records only time in bed) ranks after
-- every source with minutes asleep, whatever the priority, in byte order with the others
-- at 0. A source of rule total whose samples have no value (a known type sent with another
-- kind: its typed columns are empty) has no rank, never wins and is no alternative; a day
-- with only such sources has no day value and no ranking. A night with no minute asleep from
-- any source is not a night of 0 minutes asleep: its asleep_min and value are NULL, it has no
-- ranking (so no source has a rank, and daily_totals and daily_source_totals no row) and no
-- alternatives, and its source is the one with the most time in bed, whatever the priority
-- (docs/views.md).
--
-- Filtering this view on (person, type, day) reaches the index of rollup_source under the
-- windows and the GROUP BY, so a refresh reads only the pairs it was given. Every pick (the
-- winner, the latest sample) is a window's rank inside one pass over the pair's level-1 rows.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Whether a source ranks after every other of its (day, type) pair whatever the priority: a
-- sleep source with no minute asleep, a source of rule total with no value (its samples were
-- sent with another kind than the catalog's: their typed value is empty), which has no rank
-- at all and is nobody's alternative (calc_day_type).
CREATE OR REPLACE FUNCTION health_store.ranks_last(rule text, total numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN rule = 'sleep' THEN NOT coalesce(total > 0, false) ELSE total IS NULL END;

COMMENT ON FUNCTION health_store.ranks_last(text, numeric) IS
  'True for a level-1 source that ranks after every other of its day whatever the priority: sleep with no minute asleep, or no total at all.';

CREATE OR REPLACE VIEW health_store.calc_day_type AS
WITH r AS (
  -- day_rank picks the winner, and on a night with no minute asleep (no ranking) the source
  -- with the most time in bed; the ranking itself (ranked_sources, below) has no time in bed in
  -- it: sources at 0 minutes asleep in byte order.
  -- A fixed priority orders only the sources that do not rank last: on a night with no minute
  -- asleep the listed sources are shown by time in bed like the others.
  SELECT r.person, r.type, r.day, r.source, r.rule, r.per_source_winner, r.metric, r.unit, r.total, (r.agg).*,
         CASE WHEN NOT health_store.ranks_last(r.rule, r.total) THEN array_position(p.sources, r.source) END AS priority,
         row_number() OVER (PARTITION BY r.person, r.type, r.day
                            ORDER BY health_store.ranks_last(r.rule, r.total),
                                     CASE WHEN NOT health_store.ranks_last(r.rule, r.total) THEN array_position(p.sources, r.source) END
                                       NULLS LAST,
                                     r.total DESC NULLS LAST,
                                     CASE WHEN r.rule = 'sleep' AND NOT coalesce(r.total > 0, false) THEN (r.agg).in_bed_s END
                                       DESC NULLS LAST,
                                     r.source COLLATE "C") AS day_rank,
         -- Rule latest: the latest sample across sources: start desc, end desc, source asc
         -- (byte order), uuid asc — each source's own latest is already in level 1.
         row_number() OVER (PARTITION BY r.person, r.type, r.day
                            ORDER BY (r.agg).latest_start_at DESC NULLS LAST, (r.agg).latest_end_at DESC,
                                     r.source COLLATE "C", (r.agg).latest_uuid) AS latest_rank
  FROM health_store.rollup_source r
  LEFT JOIN health_store.source_priorities p ON p.person = r.person AND p.type = r.type
),
g AS (
  -- rule, per_source_winner, metric and unit were copied from the catalog into level 1.
  SELECT r.person, r.type, r.day,
         min(r.rule) AS rule,
         bool_or(r.per_source_winner) AS per_source_winner,
         min(r.metric) AS metric,
         min(r.unit) AS unit,
         min(r.kind COLLATE "C") COLLATE "default" AS kind,  -- byte order; the column keeps its collation
         sum(r.samples)::bigint AS samples,
         sum(r.n_values)::bigint AS n_values,
         min(r.first_start_at) AS first_start_at,
         max(r.last_start_at) AS last_start_at,
         sum(r.sum_value) AS sum_value,
         min(r.min_value) AS min_value,
         max(r.max_value) AS max_value,
         -- The winner's row (rank 1); max() only picks the one value there is.
         max(r.source) FILTER (WHERE r.day_rank = 1) AS winner,
         max(r.total) FILTER (WHERE r.day_rank = 1) AS winner_total,
         jsonb_object_agg(r.source, r.total::double precision) FILTER (WHERE r.day_rank > 1 AND r.total IS NOT NULL) AS alternatives,
         max(r.in_bed_s) FILTER (WHERE r.day_rank = 1) AS in_bed_s,
         max(r.unspecified_s) FILTER (WHERE r.day_rank = 1) AS unspecified_s,
         max(r.awake_s) FILTER (WHERE r.day_rank = 1) AS awake_s,
         max(r.core_s) FILTER (WHERE r.day_rank = 1) AS core_s,
         max(r.deep_s) FILTER (WHERE r.day_rank = 1) AS deep_s,
         max(r.rem_s) FILTER (WHERE r.day_rank = 1) AS rem_s,
         max(r.unknown_s) FILTER (WHERE r.day_rank = 1) AS unknown_s,
         -- Only the sources with a total rank (rule total: a source whose samples have no value has none).
         array_agg(r.source ORDER BY health_store.ranks_last(r.rule, r.total), r.priority NULLS LAST, r.total DESC NULLS LAST,
                                     r.source COLLATE "C")
           FILTER (WHERE r.total IS NOT NULL) AS ranked_sources,
         -- Rule sleep: no source has a minute asleep (the winner's total is the largest).
         min(r.rule) = 'sleep' AND NOT coalesce(max(r.total) FILTER (WHERE r.day_rank = 1) > 0, false) AS in_bed_only,
         max(r.latest_value) FILTER (WHERE r.latest_rank = 1 AND r.latest_start_at IS NOT NULL) AS latest_value,
         max(r.latest_start_at) FILTER (WHERE r.latest_rank = 1) AS latest_start_at,
         max(r.source) FILTER (WHERE r.latest_rank = 1 AND r.latest_start_at IS NOT NULL) AS latest_source,
         sum(r.workouts)::bigint AS workouts,
         sum(r.duration_s) AS duration_s,
         sum(r.distance_m) AS distance_m,
         sum(r.energy_kcal) AS energy_kcal
  FROM r
  GROUP BY r.person, r.type, r.day
)
SELECT g.person, g.type, g.day, g.rule, g.per_source_winner, g.metric, g.unit, g.kind, g.samples,
       g.n_values, g.first_start_at, g.last_start_at,
       CASE WHEN g.in_bed_only THEN NULL
            WHEN g.per_source_winner THEN g.winner_total::double precision
            WHEN g.rule = 'reading' THEN (g.sum_value / nullif(g.n_values, 0))::double precision
            WHEN g.rule = 'latest' THEN g.latest_value
       END AS value,
       CASE WHEN g.per_source_winner AND (g.winner_total IS NOT NULL OR g.in_bed_only) THEN g.winner
            WHEN g.rule = 'latest' THEN g.latest_source
       END AS source,
       CASE WHEN g.in_bed_only THEN '{}'::jsonb WHEN g.per_source_winner THEN coalesce(g.alternatives, '{}'::jsonb) END AS alternatives,
       CASE WHEN g.per_source_winner AND NOT g.in_bed_only THEN g.ranked_sources END AS ranked_sources,
       g.min_value, g.max_value,
       CASE WHEN g.rule = 'latest' THEN g.latest_start_at END AS measured_at,
       CASE WHEN g.rule = 'sleep' AND NOT g.in_bed_only THEN g.winner_total::double precision END AS asleep_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.core_s, 0) / 60)::double precision END AS core_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.deep_s, 0) / 60)::double precision END AS deep_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.rem_s, 0) / 60)::double precision END AS rem_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.unspecified_s, 0) / 60)::double precision END AS unspecified_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.awake_s, 0) / 60)::double precision END AS awake_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.in_bed_s, 0) / 60)::double precision END AS in_bed_min,
       CASE WHEN g.rule = 'sleep' THEN (coalesce(g.unknown_s, 0) / 60)::double precision END AS unknown_min,
       CASE WHEN g.rule = 'workout' THEN g.workouts END AS workouts,
       CASE WHEN g.rule = 'workout' THEN g.duration_s::double precision END AS duration_s,
       CASE WHEN g.rule = 'workout' THEN g.distance_m::double precision END AS distance_m,
       CASE WHEN g.rule = 'workout' THEN g.energy_kcal::double precision END AS energy_kcal
FROM g;

COMMENT ON VIEW health_store.calc_day_type IS
  'Rollup level 2 computed from rollup_source: the day value of each person, type and day by the type''s rule.';
