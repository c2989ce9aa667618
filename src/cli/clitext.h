/* clitext.h - names from the outside world (file names in the store or on a
 * stick, paths, server text) made safe to show: exactly one valid JSON
 * document whatever the bytes, and nothing on a terminal that a terminal
 * would obey (ESC, newline, C1 controls, bidi overrides). */
#ifndef OW_CLITEXT_H
#define OW_CLITEXT_H

#include <jansson.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4), 0 when s[0] starts an
 * invalid one (overlong, surrogate, beyond U+10FFFF, cut short). */
size_t cli_utf8_seq(const unsigned char *s);

/* A JSON string of arbitrary bytes: valid UTF-8 is kept, every byte of an
 * invalid sequence becomes U+FFFD.  *replaced (optional) says whether any
 * was.  NULL only when out of memory. */
json_t *cli_json_bytes(const char *s, int *replaced);
/* obj[key] = cli_json_bytes(bytes); when bytes were replaced, also
 * obj[key + "_base64"] = the exact bytes, base64 (RFC 4648).  0 or -1. */
int cli_json_set_bytes(json_t *obj, const char *key, const char *bytes);

/* `s` for a terminal: printable UTF-8 kept; control characters, DEL, C1
 * controls, bidi overrides and invalid bytes written as \xNN or \u{XXXX};
 * a backslash as \\.  Writes at most n bytes into buf (always
 * NUL-terminated; cut with "..." when it does not fit) and returns buf.
 * CLI_PRINTABLE_SIZE(len) bytes always fit a name of len bytes. */
#define CLI_PRINTABLE_SIZE(len) ((len) * 8 + 4)
const char *cli_printable(const char *s, char *buf, size_t n);
/* The same, malloc'd (NULL only when out of memory). */
char *cli_printable_dup(const char *s);
/* For a message that quotes names (errors, warnings): as cli_printable_dup
 * but a backslash stays as it is. */
char *cli_terminal_dup(const char *s);

#endif
