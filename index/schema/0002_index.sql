-- 0002: what the crawl records — index pages and the files they list.

-- One row per project page fetched: {index}/{variant}/{project}/.
CREATE TABLE pages (
  id            INTEGER PRIMARY KEY,
  url           TEXT NOT NULL UNIQUE,
  index_url     TEXT NOT NULL,             -- e.g. https://download.pytorch.org/whl/nightly
  variant       TEXT NOT NULL,             -- cu128, cpu, ... ('' for the channel root)
  project       TEXT NOT NULL,             -- PEP 503 normalized
  status        TEXT NOT NULL,             -- ok | missing (403/404: no such project) | error
  etag          TEXT,
  last_modified TEXT,
  body_sha256   TEXT REFERENCES objects(sha256),
  page_time     INTEGER,                   -- the trailer <!--TIMESTAMP n--> when present
  fetched_at    INTEGER NOT NULL,          -- last time the server answered (200 or 304)
  changed_at    INTEGER,                   -- last time the body changed
  n_files       INTEGER NOT NULL DEFAULT 0,
  n_rejected    INTEGER NOT NULL DEFAULT 0,
  error         TEXT
);

-- One row per wheel URL ever seen.  Files that vanish from a page are kept
-- (gone_at set): nightly pages list only the newest versions, older files
-- stay downloadable.
CREATE TABLE files (
  id              INTEGER PRIMARY KEY,
  url             TEXT NOT NULL UNIQUE,
  filename        TEXT NOT NULL,
  project         TEXT NOT NULL,           -- normalized
  version         TEXT NOT NULL,           -- as in the filename (+local label kept)
  build_tag       TEXT,
  python_tag      TEXT NOT NULL,           -- compressed sets kept as written: py2.py3
  abi_tag         TEXT NOT NULL,
  platform_tag    TEXT NOT NULL,
  variant         TEXT NOT NULL,           -- the folder the file lies in ('' = channel root)
  index_url       TEXT NOT NULL,
  sha256          TEXT,                    -- published #sha256, NULL when none
  meta_sha256     TEXT,                    -- data-core-metadata sha256, NULL when none
  has_metadata    INTEGER NOT NULL DEFAULT 0,
  requires_python TEXT,
  yanked          INTEGER NOT NULL DEFAULT 0,
  yanked_reason   TEXT,
  upload_time     TEXT,
  first_seen      INTEGER NOT NULL,
  last_seen       INTEGER NOT NULL,
  gone_at         INTEGER,                 -- set when no page lists it any more
  object_sha256   TEXT REFERENCES objects(sha256),  -- set once fetched and verified
  trust           TEXT                     -- published-hash | record-pinned (once fetched)
);
CREATE INDEX files_project ON files(project, variant);
CREATE INDEX files_filename ON files(filename);

-- Which page lists which file (a root file is listed by every variant page).
CREATE TABLE page_files (
  page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  PRIMARY KEY (page_id, file_id)
) WITHOUT ROWID;
CREATE INDEX page_files_file ON page_files(file_id);
