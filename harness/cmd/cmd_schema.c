/* cmd_schema.c - `mallocbench schema [--diagnose] [--json]`: the CSV schema (csv.h's
 * CSV_COLUMNS) as results/SCHEMA.md, or diagnose's document's keys (diagdoc.h's
 * DIAGDOC_KEYS); either as JSON for the scripts. */
#include "cli.h"
#include "csv.h"
#include "diagdoc.h"

#include <stdio.h>
#include <string.h>

int cmd_schema(int argc, char **argv)
{
    bool json = false, diagnose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: mallocbench schema [--diagnose] [--json]\nprints results/SCHEMA.md: every CSV column with its unit;\n"
                   "--json: the same table for the scripts (name, type, unit, meaning, schema_version);\n"
                   "--diagnose: the keys of diagnose's document (schema " DIAGDOC_SCHEMA "), each with its type\n"
                   "and meaning (with --json: every key's path, for the scripts)\n");
            return 0;
        }
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--diagnose"))
            diagnose = true;
        else
            return die_usage("schema: unexpected argument '%s'", argv[i]);
    }
    if (diagnose)
        json ? diagdoc_print_keys_json(stdout) : diagdoc_print_keys(stdout);
    else
        json ? csv_print_schema_json(stdout) : csv_print_schema(stdout);
    return 0;
}
