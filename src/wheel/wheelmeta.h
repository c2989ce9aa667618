/* wheelmeta.h - the text files of a wheel's .dist-info directory.
 *
 * METADATA (core metadata; also PEP 658 `.metadata` files): RFC 822 style
 * headers with folded continuation lines and repeated fields; the body after
 * the first blank line is the description and is ignored.
 * RECORD: CSV (quoted fields, "" escapes, \n or \r\n) of path,hash,size with
 * hash `sha256=<urlsafe base64 without padding>`. */
#ifndef OW_WHEELMETA_H
#define OW_WHEELMETA_H

#include <stddef.h>
#include <stdint.h>

/* Requires-Dist lines (and, apart, Provides-Extra lines) one METADATA may
 * have: the largest real wheels have a few hundred (apache-airflow's extras
 * list every provider), and every line is a constraint the resolver keeps
 * and checks, so a file of 700,000 of them would stall it for minutes. */
#define OW_METADATA_MAX_REQUIRES 2000u

struct ow_metadata {
	char *metadata_version;
	char *name;
	char *version;
	char *requires_python; /* NULL when absent */
	char *summary;         /* NULL when absent */
	char **requires_dist;  /* in file order */
	size_t n_requires_dist;
	char **provides_extra;
	size_t n_provides_extra;
};

/* Parse core metadata.  Metadata-Version, Name and Version are required and
 * may appear once; Name must be a valid distribution name.  OW_EPARSE with a
 * detail naming the line on malformed input; OW_ETOOBIG past
 * OW_METADATA_MAX_REQUIRES Requires-Dist or Provides-Extra lines. */
int ow_metadata_parse(const char *buf, size_t len, struct ow_metadata **out);
void ow_metadata_free(struct ow_metadata *md);

struct ow_record_row {
	char *path; /* NUL-terminated, checked like a member name */
	size_t path_len;
	int has_hash;
	uint8_t sha256[32];
	int has_size;
	uint64_t size;
	size_t line; /* 1-based, for messages */
};

struct ow_record {
	struct ow_record_row *rows;
	size_t n;
};

/* Parse RECORD.  Rows have exactly three fields; paths must pass
 * ow_zip_name_check; a hash is empty or sha256=<43 base64url chars>; a size is
 * empty or decimal.  OW_ERECORD on malformed input. */
int ow_record_parse(const char *buf, size_t len, struct ow_record **out);
void ow_record_free(struct ow_record *r);

#endif
