-- A Stridee workout sent again with other content replaces the copy held: store_workout now
-- answers `replaced` for it (and `stored` only for a workout new to the person), so the
-- receiver's metrics count inserted and replaced workouts apart (CONTRACT.md §7).
ALTER TYPE health_store.push_outcome ADD VALUE IF NOT EXISTS 'replaced';
