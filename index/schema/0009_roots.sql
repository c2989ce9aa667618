-- 0009: what is known about an index root's layout, so that a later crawl,
-- resolve or sync does not ask again for folders it does not have.
-- flat: one root, every project at {url}/{project}/ (PyPI's /simple, a
--       devpi or Artifactory index): none of the default variant folders
--       had a torch page (all 403/404);
-- variants: a channel root whose {url}/{variant}/{project}/ pages exist.
-- A remembered layout is asked again only with --force (crawl, sync).
CREATE TABLE roots (
  url       TEXT PRIMARY KEY,         -- the index URL as given, no trailing slash
  layout    TEXT NOT NULL CHECK (layout IN ('flat', 'variants')),
  probed_at INTEGER NOT NULL          -- when the variant folders were last asked for
) WITHOUT ROWID;
