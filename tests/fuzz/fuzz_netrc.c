/* fuzz_netrc.c - the netrc parser on arbitrary bytes.  Every entry of a
 * parse that succeeds has its three fields (machine NULL only for default),
 * the machine in lowercase and found again by its own name; a crash or a
 * broken invariant aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netrc.h"

static void check_entry(const struct ow_netrc *n, const struct ow_netrc_entry *e)
{
	if (!e->login || !e->password)
		abort();
	if (!e->machine) {
		if (!ow_netrc_find(n, "\x01no such host", true))
			abort();
		return;
	}
	for (const char *p = e->machine; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			abort();
	const struct ow_netrc_entry *f = ow_netrc_find(n, e->machine, false);
	if (!f || strcmp(f->machine, e->machine))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_netrc n;
	if (ow_netrc_parse((const char *)data, size, &n) != 0) {
		if (n.n || n.v)
			abort();
		return 0;
	}
	for (size_t i = 0; i < n.n; i++)
		check_entry(&n, &n.v[i]);
	ow_netrc_dispose(&n);
	return 0;
}
