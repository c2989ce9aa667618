/* cmd_keygen.c - offwheel keygen: an Ed25519 key pair in signify format. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clitext.h"
#include "offwheel/signify.h"

static const char usage[] = "keygen KEYFILE [--force]";
static const char description[] =
	"Make an Ed25519 key pair for signing exports, in OpenBSD signify's format:\n"
	"KEYFILE is the secret key (mode 0600, not passphrase-protected, as\n"
	"'signify -G -n'), KEYFILE.pub the public key ('KEY.sec' gives 'KEY.pub').\n"
	"A secret key name ending '.pub' is refused, and an existing key file is\n"
	"never replaced without --force.  Carry the public key to the targets\n"
	"separately; 'signify-openbsd -V -p KEY.pub -m SHA256SUMS' verifies an export\n"
	"with the stock tool.  Keys made by 'signify-openbsd -G -n' work with\n"
	"'offwheel export --sign' too.";

enum { OPT_FORCE = 400 };
static const struct cli_opt opts[] = {
	{"force", OPT_FORCE, no_argument, NULL, "replace existing key files"},
	{NULL, 0, 0, NULL, NULL},
};

static int on_opt(struct cli *c, int key, const char *arg, void *ud)
{
	(void)c, (void)arg;
	if (key != OPT_FORCE)
		return 2;
	*(int *)ud = 1;
	return 0;
}

/* KEY.sec -> KEY.pub, else KEYFILE.pub: 0, or -1 when that does not fit
 * in out (it is refused, never cut). */
static int pub_path(const char *sec, char *out, size_t n)
{
	size_t l = strlen(sec);
	if (l > 4 && !strcmp(sec + l - 4, ".sec"))
		l -= 4;
	if (l + sizeof ".pub" > n)
		return -1;
	memcpy(out, sec, l);
	memcpy(out + l, ".pub", sizeof ".pub");
	return 0;
}

int cmd_keygen(struct cli *c, int argc, char **argv)
{
	int force = 0;
	const struct cli_spec cs = {opts, usage, description, on_opt, &force};
	int first = cli_parse(c, argc, argv, &cs);
	if (first < 0)
		return cli_parse_exit(first);
	if (first + 1 != argc)
		return cli_usage_error(c, "keygen: name one KEYFILE");
	size_t l = strlen(argv[first]);
	if (!l || argv[first][l - 1] == '/')
		return cli_usage_error(c, "keygen: '%s' is not a file name", argv[first]);
	if (l >= 4 && !strcmp(argv[first] + l - 4, ".pub"))
		return cli_usage_error(c, "keygen: %s: that is where the secret key would go, and a "
		                          "'.pub' name would be handed out as the public key — name "
		                          "it KEY.sec (the public key becomes KEY.pub)", argv[first]);
	char pub[4096], id[OW_KEYID_HEX];
	struct ow_signify_sec sec;
	struct ow_signify_pub pk;
	if (pub_path(argv[first], pub, sizeof pub) < 0)
		return cli_usage_error(c, "keygen: %s: too long a name (its public key's name must be "
		                          "shorter than %zu bytes)", argv[first], sizeof pub);
	int rc = ow_signify_keygen(&sec, &pk);
	if (!rc)
		rc = ow_signify_write_keys(argv[first], pub, &sec, force);
	memset(&sec, 0, sizeof sec);
	if (rc)
		return cli_fail(c, rc);
	ow_signify_keyid(pk.keynum, id);
	if (c->json) { /* the names as given, any bytes (JSON text plus _base64 when not UTF-8) */
		json_t *doc = json_pack("{s:s, s:s}", "command", "keygen", "key_id", id);
		if (doc && (cli_json_set_bytes(doc, "secret_key", argv[first]) ||
		            cli_json_set_bytes(doc, "public_key", pub)))
			json_decref(doc), doc = NULL;
		cli_json_out(doc);
	} else {
		char *ss = cli_terminal_dup(argv[first]), *ps = cli_terminal_dup(pub);
		cli_say(c, "secret key %s, public key %s, key id %s\n", ss ? ss : "?", ps ? ps : "?", id);
		free(ss);
		free(ps);
	}
	return 0;
}
