-- 0003: GPU audits of stored objects (offwheel audit), per object and member.
-- A derived cache: deleting these rows only means objects are read again.

-- One row per audited object, written with its members in one transaction.
CREATE TABLE audit_objects (
  object_sha256 TEXT PRIMARY KEY REFERENCES objects(sha256) ON DELETE CASCADE,
  kind          TEXT NOT NULL,      -- wheel | library
  format        INTEGER NOT NULL,   -- listing format (auditcode.c); another one = audit again
  scan          INTEGER NOT NULL,   -- data-section scan mode used: 0 auto, 1 always, 2 never
  n_libraries   INTEGER NOT NULL,   -- rows in audits
  n_skipped     INTEGER NOT NULL,   -- members that cannot hold device code (not inflated)
  audited_at    INTEGER NOT NULL    -- unix seconds
) WITHOUT ROWID;

-- One row per library: a wheel member, or the object itself (member '').
CREATE TABLE audits (
  object_sha256 TEXT NOT NULL REFERENCES audit_objects(object_sha256) ON DELETE CASCADE,
  member        TEXT NOT NULL,
  size          INTEGER NOT NULL,   -- uncompressed bytes
  scanned       INTEGER NOT NULL,   -- data sections were magic-scanned
  n_modules     INTEGER NOT NULL,   -- fatbin containers
  n_entries     INTEGER NOT NULL,
  sass          TEXT NOT NULL,      -- "sm_75 sm_80 sm_90a", sorted, unique (for queries)
  ptx           TEXT NOT NULL,      -- "compute_120@9.0"
  listing       TEXT NOT NULL,      -- every module's entries, compact: enough for any verdict
  PRIMARY KEY (object_sha256, member)
) WITHOUT ROWID;
