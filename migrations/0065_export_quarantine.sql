-- Records of the Health app's export that break a bound (a text over 1,024 bytes, an
-- implausible value or date) are quarantined like a healthd sample, in the same table. An
-- export read again (a newer one holds the same records) must not quarantine the same element
-- twice: its attributes' SHA-256 identifies it, once per person. Samples pushed by healthd keep
-- NULL here and are kept per delivery, as before.
ALTER TABLE health_store.quarantine ADD COLUMN raw_sha256 bytea;
CREATE UNIQUE INDEX quarantine_person_raw_sha256 ON health_store.quarantine (person, raw_sha256)
  WHERE raw_sha256 IS NOT NULL;
COMMENT ON COLUMN health_store.quarantine.raw_sha256 IS
  'For an export''s record: SHA-256 of raw (its attributes), so each is quarantined once per person; NULL for pushed samples.';
