-- 0011: an export's name (`export --name`, signed in its manifest.json).
-- The workspace keeps its sequences per key and name, as targets do, so one
-- key signs any number of sticks.  Rows from before get the name an export
-- to the same directory now gets by default: the last component of the
-- directory, or of the s3://BUCKET/PREFIX URL (the bucket when there is no
-- prefix).  rtrim() strips the last component's characters from the right,
-- leaving the text up to the last '/', which replace() then removes.
ALTER TABLE exports ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE exports SET name = replace(directory, rtrim(directory, replace(directory, '/', '')), '');
CREATE INDEX exports_key_name ON exports(key_id, name, sequence);
