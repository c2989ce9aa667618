-- 0004: what fetch records beyond files.object_sha256 / files.trust (0002).
-- The PEP 658 metadata file (<wheel url>.metadata), verified against the
-- page's data-core-metadata hash and stored as an object.
ALTER TABLE files ADD COLUMN meta_object TEXT REFERENCES objects(sha256);
-- Why the last fetch of this file was refused (NULL when it was not).
ALTER TABLE files ADD COLUMN rejected TEXT;
