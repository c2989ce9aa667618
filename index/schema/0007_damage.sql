-- 0007: an object verify or fsck found damaged (its bytes no longer hash to
-- its name).  fetch and sync then move the file aside and download it again;
-- publishing the object clears the mark.  NULL: not known to be damaged.
ALTER TABLE objects ADD COLUMN damaged TEXT;
