-- 0008: the core metadata of a file, parsed once and kept here, so that a
-- resolve that has seen it before reads neither a .metadata object nor a
-- wheel.  Only what resolve uses is kept; the METADATA bytes themselves
-- stay where they came from (a .metadata object, the wheel) or, when read
-- by HTTP range requests, nowhere (their sha256 is kept to compare with the
-- wheel's own METADATA once the whole wheel is fetched).
CREATE TABLE file_meta (
  file_id         INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  source          TEXT NOT NULL,    -- pep658 | range | wheel
  sha256          TEXT NOT NULL,    -- of the METADATA bytes it was parsed from
  size            INTEGER NOT NULL, -- of those bytes
  name            TEXT NOT NULL,
  version         TEXT NOT NULL,
  requires_python TEXT,
  requires_dist   TEXT NOT NULL,    -- one requirement a line, in file order
  provides_extra  TEXT NOT NULL,    -- one extra a line
  read_at         INTEGER NOT NULL
);
