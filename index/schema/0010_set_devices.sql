-- 0010: what a set is known to do on a GPU (resolve/sync --device, audit
-- set:N --device, export --device).  One row per set and device asked for:
-- a set's members never change (a different pick is a new set), so the
-- verdict stays true of it.  export refuses a set recorded as not running.
CREATE TABLE set_devices (
  set_id      INTEGER NOT NULL REFERENCES sets(id) ON DELETE CASCADE,
  cc          INTEGER NOT NULL,        -- compute capability, 10 * major + minor (120)
  driver      INTEGER NOT NULL,        -- 1000 * major + 10 * minor; 0 = not given
  verdict     TEXT NOT NULL CHECK (verdict IN ('native', 'jit', 'partial', 'none', 'no-code', 'unknown')),
  runs        INTEGER,                 -- 1 runs, 0 would not run, NULL unknown
  predicted   INTEGER NOT NULL,        -- judged from torchvision (same build), not torch
  wheel       TEXT,                    -- the wheel judged (file name)
  library     TEXT,                    -- partial / none: a library that cannot run (its own before NVIDIA's)
  modules     INTEGER,                 -- its modules with code
  no_image    INTEGER,                 -- of those, the ones without an image for the device
  detail      TEXT,
  judged_at   INTEGER NOT NULL,        -- unix seconds
  PRIMARY KEY (set_id, cc, driver)
) WITHOUT ROWID;
