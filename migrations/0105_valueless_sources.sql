-- Two rules of the day values changed (repeatable 20_rollup_source.sql, 21_rollup_day_type.sql):
-- a source of rule total whose samples have no value (a known type sent with another kind than
-- the catalog's) no longer ranks, wins or shows as an alternative, and a sleep sample sent with
-- another kind than category no longer counts in unknown_min; sleep sources with no minute
-- asleep rank in byte order after those with minutes, by time in bed only on a night with
-- none. The rollups of the people they touch are made again under the new definitions by
-- health_store.after_migrate(), at the end of this migration run: level 1 from the samples
-- where a sleep sample of another kind is held, levels 2 and 3 where a ranking may change.
INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'rebuild_rollups', k.person
FROM health_store.series k
JOIN health_store.sample_rows s ON s.person = k.person AND s.series = k.series
WHERE k.type = 'HKCategoryTypeIdentifierSleepAnalysis' AND s.kind <> 'category'
ON CONFLICT DO NOTHING;

INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'refresh_derived', r.person
FROM health_store.rollup_source r
WHERE (r.rule = 'total' AND r.total IS NULL) OR (r.rule = 'sleep' AND r.total = 0 AND r.rank > 2)
ON CONFLICT DO NOTHING;
