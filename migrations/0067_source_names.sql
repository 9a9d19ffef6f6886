-- The names people know their sources by: healthd and Stridee send a bundle identifier
-- (com.apple.health.14452A08-…), the Health app's export the device's name ("Anna's Apple
-- Watch"). A name is learned from an export record that is a twin of a pushed sample
-- (named_by export), or set by the person (named_by person, which the learned one never
-- overwrites). The views keep the identifier; health.sources adds the name.
CREATE TABLE health_store.source_names (
  person    text NOT NULL,
  source    text NOT NULL,
  named_by  text NOT NULL CHECK (named_by IN ('export', 'person')),
  name      text NOT NULL CHECK (name <> '' AND octet_length(name) <= 1024),
  PRIMARY KEY (person, source, named_by)
);

COMMENT ON TABLE health_store.source_names IS
  'A name for a person''s source: learned from the Health app''s export (its sourceName on a twin of a pushed sample) or set with health.set_source_name.';
