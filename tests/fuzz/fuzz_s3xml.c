/* fuzz_s3xml.c - an S3 answer read as the S3 client reads it (s3xml.h):
 * a ListObjectsV2 page, a multipart-uploads listing, an initiated or
 * completed upload, an <Error> and the one-line reason made of it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3.h"
#include "s3xml.h"

static void child(struct ow_s3_span s, const char *name)
{
	free(ow_s3_xml_child(s, name));
}

/* Every element `item` in s, and the children wanted of each. */
static void each(struct ow_s3_span s, const char *item, const char *const *kids)
{
	struct ow_s3_span in;
	while (ow_s3_xml_next(&s, item, &in))
		for (const char *const *k = kids; *k; k++)
			child(in, *k);
}

static void listing(struct ow_s3_span all)
{
	static const char *const contents[] = {"Key", "Size", "ETag", "LastModified", NULL};
	static const char *const uploads[] = {"Key", "UploadId", NULL};
	struct ow_s3_span root, s = all;
	if (ow_s3_xml_next(&s, "ListBucketResult", &root)) {
		each(root, "Contents", contents);
		child(root, "IsTruncated");
		child(root, "NextContinuationToken");
	}
	s = all;
	if (ow_s3_xml_next(&s, "ListMultipartUploadsResult", &root))
		each(root, "Upload", uploads);
	child(all, "UploadId");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), why[300];
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	struct ow_s3_span all = {s, s + size}, err, rest = all;
	listing(all);
	if (ow_s3_xml_next(&rest, "Error", &err)) {
		child(err, "Code");
		child(err, "Message");
	}
	free(ow_s3_xml_text(all));
	ow_s3_error_text(NULL, s, why, sizeof why);
	free(s);
	return 0;
}
