/* cli.c - what the commands share besides the error printers (contract:
 * cli.h): reading --NAME VALUE, and the whole command line for the sidecar. */
#include "cli.h"

#include <string.h>

const char *cli_take(const char *name, int argc, char **argv, int *i)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int whole_argc;
static char **whole_argv;

void cli_set_whole(int argc, char **argv)
{
    whole_argc = argc;
    whole_argv = argv;
}

void cli_whole(int *argc, char ***argv)
{
    *argc = whole_argc;
    *argv = whole_argv;
}
