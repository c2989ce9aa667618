-- 0006: exports written by `offwheel export` (the target side remembers the
-- last accepted sequence per key in its own state file, not here).
CREATE TABLE exports (
  id              INTEGER PRIMARY KEY,
  directory       TEXT NOT NULL,           -- absolute path at export time
  sequence        INTEGER NOT NULL,        -- strictly increasing per key (rollback protection)
  manifest_sha256 TEXT NOT NULL,           -- hash of manifest.json (listed in the signed SHA256SUMS)
  key_id          TEXT,                    -- signify keynum in hex; NULL when unsigned
  n_files         INTEGER NOT NULL,
  bytes           INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL
);
CREATE INDEX exports_key ON exports(key_id, sequence);
