/* exportname.c - an export's name: what a target keeps its accepted
 * sequence under, together with the key, so that one key can sign any
 * number of sticks (docs/export-format.md, "Sequence, expiry, rollback"). */
#include <stdio.h>
#include <string.h>

#include "offwheel/error.h"
#include "exportint.h"

const char *ow_export_name_problem(const char *name)
{
	size_t n = strlen(name);
	if (!n)
		return "it is empty";
	if (n > OW_EXPORT_NAME_MAX)
		return "it is longer than 64 bytes";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e)
			return "it holds a byte that is not printable ASCII";
	if (name[0] == ' ' || name[n - 1] == ' ')
		return "it begins or ends with a space";
	return NULL;
}

int ow_export_default_name(const char *where, char out[OW_EXPORT_NAME_MAX + 1])
{
	size_t end = strlen(where);
	while (end && where[end - 1] == '/')
		end--;
	size_t start = end;
	while (start && where[start - 1] != '/')
		start--;
	char name[OW_EXPORT_NAME_MAX + 2];
	size_t len = end - start;
	snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1),
	         where + start);
	const char *why = ow_export_name_problem(name);
	if (why)
		return ow_err(OW_EINVAL, "%s: its last component cannot name the export (%s) — give "
		                         "--name NAME (printable ASCII, at most 64 bytes)",
		              where, !len ? "there is none" : why);
	memcpy(out, name, len + 1);
	return 0;
}
