-- 0005: resolved sets (offwheel resolve): one torch + torchvision + torchaudio
-- set per target, with its dependency closure as members.

-- One row per distinct resolution of a target.  A re-resolve that picks the
-- same members updates resolved_at instead of adding a row, so "the N newest
-- sets of a target" (gc --keep N) counts real changes.
CREATE TABLE sets (
  id            INTEGER PRIMARY KEY,
  target        TEXT NOT NULL,           -- "cu128 cp312-manylinux_2_28_x86_64"
  index_url     TEXT NOT NULL,           -- the channel / index it came from
  variant       TEXT NOT NULL,           -- cu128, cpu, ...
  python        TEXT NOT NULL,           -- cp312, cp313t
  platform      TEXT NOT NULL,           -- manylinux_2_28_x86_64, win_amd64, ...
  selector      TEXT NOT NULL,           -- latest | date:YYYYMMDD | version:X.Y.Z
  torch_version TEXT,                    -- NULL when no torch wheel fits the target
  complete      INTEGER NOT NULL,        -- every requested project matched (and closure done)
  with_deps     INTEGER NOT NULL,        -- members include the dependency closure
  missing       TEXT,                    -- "torchvision,torchaudio" when incomplete
  members_key   TEXT NOT NULL,           -- sorted member file ids (dedup)
  created_at    INTEGER NOT NULL,
  resolved_at   INTEGER NOT NULL
);
CREATE INDEX sets_target ON sets(index_url, target, resolved_at);

CREATE TABLE set_members (
  set_id      INTEGER NOT NULL REFERENCES sets(id) ON DELETE CASCADE,
  file_id     INTEGER NOT NULL REFERENCES files(id),
  role        TEXT NOT NULL CHECK (role IN ('torch', 'torchvision', 'torchaudio', 'project', 'dep')),
  required_by TEXT,                      -- "torch 2.10.0 -> sympy 1.14.0" (NULL for the set's own)
  PRIMARY KEY (set_id, file_id)
) WITHOUT ROWID;
CREATE INDEX set_members_file ON set_members(file_id);
