/* s3xml.h - the XML of S3's answers (ListObjectsV2, ListMultipartUploads,
 * InitiateMultipartUpload, CompleteMultipartUpload, Error), read without a
 * parser.
 *
 * S3 answers in small, flat XML: named elements (no two of one name nested),
 * text with the five predefined entities and character references, no CDATA.
 * The elements wanted are found by their tags; libxml2 stays with html.c, its
 * one includer.  Text that is not plain (markup or an unknown entity inside,
 * a NUL) is refused, never guessed at.  Pure functions on bytes, run on
 * hostile answers by tests/fuzz/fuzz_s3xml.c. */
#ifndef OW_S3XML_H
#define OW_S3XML_H

/* Bytes [p, end) of an answer, not NUL-terminated. */
struct ow_s3_span {
	const char *p, *end;
};

/* The next element `name` in *s: its content in *in, and *s moves past its
 * end tag.  1 found, 0 not. */
int ow_s3_xml_next(struct ow_s3_span *s, const char *name, struct ow_s3_span *in);
/* The text of `in`, entities decoded, malloc'd; NULL when it is not plain
 * text or out of memory. */
char *ow_s3_xml_text(struct ow_s3_span in);
/* The text of the first element `name` in s, or NULL. */
char *ow_s3_xml_child(struct ow_s3_span s, const char *name);

#endif
