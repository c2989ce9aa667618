-- 0012: source distributions.  A page's sdists (name-version.tar.gz, .zip)
-- are recorded beside its wheels, kind 'sdist', with empty tags: no target's
-- tag order admits them, so a resolve takes one only when asked to
-- (--allow-sdist), for a version that has no wheel for the target.
ALTER TABLE files ADD COLUMN kind TEXT NOT NULL DEFAULT 'wheel';
-- What an sdist's build needs, read from its pyproject.toml ([build-system]
-- requires; setuptools when it has none): one requirement a line.  NULL for
-- a wheel.  deps_dynamic: its PKG-INFO does not promise its dependencies
-- (Metadata-Version before 2.2, or Requires-Dist marked Dynamic, PEP 643):
-- they are taken as written and the resolve says so.
ALTER TABLE file_meta ADD COLUMN build_requires TEXT;
ALTER TABLE file_meta ADD COLUMN deps_dynamic INTEGER NOT NULL DEFAULT 0;
-- Pages stored before this version were read with their sdists left out;
-- forget their validators so that the next crawl reads them whole again
-- (a 304 would keep the old list of files).
UPDATE pages SET etag = NULL, last_modified = NULL;
-- A set member may be there only to build an sdist of the set on the target
-- (role 'build'): the CHECK of set_members learns the new role, which takes
-- a new table in SQLite.
CREATE TABLE set_members_0012 (
  set_id      INTEGER NOT NULL REFERENCES sets(id) ON DELETE CASCADE,
  file_id     INTEGER NOT NULL REFERENCES files(id),
  role        TEXT NOT NULL CHECK (role IN ('torch', 'torchvision', 'torchaudio', 'project', 'dep',
                                            'build')),
  required_by TEXT,
  PRIMARY KEY (set_id, file_id)
) WITHOUT ROWID;
INSERT INTO set_members_0012 SELECT set_id, file_id, role, required_by FROM set_members;
DROP TABLE set_members;
ALTER TABLE set_members_0012 RENAME TO set_members;
CREATE INDEX set_members_file ON set_members(file_id);
