-- 0001: the verified object store registry.
CREATE TABLE objects (
  sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  size       INTEGER NOT NULL CHECK (size >= 0),
  kind       TEXT NOT NULL,            -- wheel, metadata, page, blob
  created_at INTEGER NOT NULL          -- unix seconds
) WITHOUT ROWID;
