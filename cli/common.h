/*
 * common.h - what the client programs (ofs, ofs-pbj) read the same way:
 * the words they take anywhere on their line, --help and --version, and
 * the cluster from OFS_CLUSTER (CLI.md, "Common").
 */
#ifndef OFS_CLI_COMMON_H
#define OFS_CLI_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_MAX_CLUSTER 16

struct cli_line {
	const char *cluster[CLI_MAX_CLUSTER];    /* --cluster, then OFS_CLUSTER */
	size_t ncluster;
	char **rest;             /* the line without those words: rest[0] the
	                            program, rest[1] the command */
	int nrest;
	bool json;               /* --json (with CLI_LINE_PBJ) */
	const char *db;          /* --db FILE (with CLI_LINE_PBJ) */
	char *env;               /* (OFS_CLUSTER's copy, owned) */
};

#define CLI_LINE_PBJ 1u      /* --json and --db are taken out too */

/* Take the common words out of argv. 0, or -EINVAL with *why a usage
 * message; -ENOMEM. Free with cli_line_free either way. */
int cli_line_parse(int argc, char **argv, unsigned flags, struct cli_line *l, const char **why);
/* The command is --help (or -h, help) or --version: printed (usage text,
 * or "PROG VERSION"), true. */
bool cli_line_help(const struct cli_line *l, const char *prog, const char *usage_text);
/* No --cluster: the servers OFS_CLUSTER lists (comma-separated).
 * -ENOENT: neither; -ENOMEM. */
int cli_line_cluster(struct cli_line *l);
void cli_line_free(struct cli_line *l);

#endif
