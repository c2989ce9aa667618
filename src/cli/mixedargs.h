/* mixedargs.h - cli_parse for commands whose options may follow operands
 * ("export DIR --sign KEY", "check DIR --pubkey KEY"). */
#ifndef OW_MIXEDARGS_H
#define OW_MIXEDARGS_H

#include "cli.h"

/* Like cli_parse, but keeps parsing after each operand; on success the
 * operands are moved to argv[1..*nops] and 1 is returned (else what
 * cli_parse returned: CLI_HELP_SHOWN or -(exit code)). */
int cli_parse_mixed(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
                    int *nops);

#endif
