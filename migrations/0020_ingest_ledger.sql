-- The ledger of backlog files `health-warehouse ingest` has read (docs/ingest.md).
--
-- One row per person and file: how far into the file everything is stored, and the SHA-256
-- of the bytes up to there. A re-run skips a file whose size and modification time are those
-- recorded and that was read to its end, without opening it; a file that grew is read from
-- `ingested_bytes` once the hash of its first `ingested_bytes` bytes still matches. A row is
-- written in the same transaction as the file's last batch, so it never claims data that was
-- not stored. Keyed with person first, like every table here.
CREATE TABLE health_store.ingested_files (
  person            text NOT NULL,
  -- Absolute path with symlinks resolved, as stored on the file's delivery rows.
  path              text NOT NULL,
  -- json (one body), jsonl (one body a line) or csv (bodies appended); compressed for .gz.
  format            text NOT NULL CHECK (format IN ('json', 'jsonl', 'csv')),
  compressed        boolean NOT NULL,
  -- Size and modification time (ns since the epoch) when the file was last read.
  size_bytes        bigint NOT NULL CHECK (size_bytes >= 0),
  mtime_ns          bigint NOT NULL,
  -- Everything before this byte offset is stored; equal to size_bytes once read to the end.
  -- A .gz file is all or nothing: 0 is never recorded for it, size_bytes once it is in.
  ingested_bytes    bigint NOT NULL CHECK (ingested_bytes >= 0 AND ingested_bytes <= size_bytes),
  -- Line terminators and CSV records before ingested_bytes, so errors in an appended part
  -- name the file's own line and record numbers.
  ingested_lines    bigint NOT NULL DEFAULT 0 CHECK (ingested_lines >= 0),
  ingested_records  bigint NOT NULL DEFAULT 0 CHECK (ingested_records >= 0),
  -- SHA-256 of bytes [0, ingested_bytes) as stored on disk (compressed bytes for .gz).
  sha256            bytea NOT NULL CHECK (length(sha256) = 32),
  -- Totals over every run that read this file.
  runs              integer NOT NULL DEFAULT 1 CHECK (runs >= 0),
  batches           bigint NOT NULL DEFAULT 0,
  samples           bigint NOT NULL DEFAULT 0,
  inserted          bigint NOT NULL DEFAULT 0,
  duplicates        bigint NOT NULL DEFAULT 0,
  replaced          bigint NOT NULL DEFAULT 0,
  quarantined       bigint NOT NULL DEFAULT 0,
  first_ingested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_ingested_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (person, path)
);

COMMENT ON TABLE health_store.ingested_files IS
  'Backlog files read by `health-warehouse ingest`, per person: size, modification time, the byte offset stored up to and the SHA-256 of the bytes before it, and totals. Lets a re-run skip unchanged files unread and read appended ones from where they ended.';
