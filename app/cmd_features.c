/* `pbf features`: the table of what runs where (include/pbf/features.h) as CSV. */
#include <string.h>

#include "cli.h"
#include "pbf/features.h"

static const char features_help[] =
    "usage: pbf features\n"
    "\n"
    "Prints which features run on which backend, as CSV with the header\n"
    "feature,cpu,cuda,mpi. A cell is yes, unverified (CUDA code that has not yet passed its\n"
    "parity test on a GPU: refused unless PBF_ALLOW_UNVERIFIED=1 is set) or no: <reason>.\n"
    "`pbf info SCENE` names the cells a scene uses. docs/features.md explains each row.\n";

/* One CSV field: quoted when it holds a comma or a quote (RFC 4180). */
static void put_field(const char *s) {
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; ++s) {
        if (*s == '"') putchar('"');
        putchar(*s);
    }
    putchar('"');
}

int cmd_features(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(features_help, stdout);
            return CLI_EXIT_OK;
        }
        fprintf(stderr, "pbf features: unknown option '%s'\n%s", argv[i], features_help);
        return CLI_EXIT_USAGE;
    }
    puts("feature,cpu,cuda,mpi");
    char cell[PBF_ERROR_SIZE];
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        const pbf_feature_info *info = pbf_feature_get((pbf_feature)f);
        fputs(info->name, stdout);
        for (int c = 0; c < PBF_COLUMN_COUNT; ++c) {
            putchar(',');
            pbf_support s = info->support[c];
            if (s == PBF_SUPPORT_NO)
                snprintf(cell, sizeof cell, "no: %s", info->reason[c]);
            else
                snprintf(cell, sizeof cell, "%s", pbf_support_name(s));
            put_field(cell);
        }
        putchar('\n');
    }
    return CLI_EXIT_OK;
}
