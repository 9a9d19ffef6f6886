-- What a Health Auto Export workout fills in the workout of another way in it is (CONTRACT.md
-- §9: "the fields it lacks are filled, none overwritten"): the app's activity name, distance and
-- active energy, kept beside the held workout's sample, never in it — that sample gives back
-- what its own way in sent, and a resend of it stays a duplicate. health.workouts and the
-- rollups (health_store.calc_source) read a held value first, the fill where it has none.
-- Written by health_store.store_hae_workout (the app's workout after the held one) and
-- health_store.drop_lower_twins (the app's workout replaced by one that came later); moved with
-- the workout it fills when that is replaced, deleted with it.
CREATE TABLE health_store.workout_fills (
  person        text NOT NULL,
  uuid          uuid NOT NULL,
  activity_name text,
  distance_m    double precision,
  energy_kcal   double precision,
  PRIMARY KEY (person, uuid)
);

COMMENT ON TABLE health_store.workout_fills IS
  'Per held workout (person, uuid) what a Health Auto Export copy of it brought that its own way in may lack: activity name, distance in metres, active energy in kcal; read where the held workout has none.';
