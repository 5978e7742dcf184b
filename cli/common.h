/*
 * common.h - what the client programs (ofs, ofs-pbj) read the same way:
 * the words they take anywhere on their line, --help and --version, the
 * cluster from OFS_CLUSTER, and the identity they connect with
 * (--identity IDDIR, OFS_IDENTITY, or --insecure) (CLI.md, "Common" and
 * "Identity and security").
 */
#ifndef OFS_CLI_COMMON_H
#define OFS_CLI_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_MAX_CLUSTER 16

struct tls_conf;

struct cli_line {
	const char *cluster[CLI_MAX_CLUSTER];    /* --cluster, then OFS_CLUSTER */
	size_t ncluster;
	char **rest;             /* the line without those words: rest[0] the
	                            program, rest[1] the command */
	int nrest;
	bool json;               /* --json (with CLI_LINE_PBJ) */
	const char *db;          /* --db FILE (with CLI_LINE_PBJ) */
	const char *identity;    /* --identity IDDIR */
	bool insecure;           /* --insecure */
	struct tls_conf *tls;    /* loaded by cli_line_security (owned) */
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
/*
 * How this program connects (conn_security): the identity in --identity
 * IDDIR, else in OFS_IDENTITY, else plaintext with --insecure. 0, or an
 * exit status (2) after a message on stderr saying what is wrong and how
 * to get an identity. With required false, finding none is not an error
 * (a command that may need no server): a connection then fails with
 * "no identity".
 */
int cli_line_security(struct cli_line *l, const char *prog, bool required);
void cli_line_free(struct cli_line *l);

#endif
