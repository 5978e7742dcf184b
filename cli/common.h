/*
 * common.h - what the programs read the same way: the words a value may
 * be (all three programs: cli_value_ok); and for the client programs (ofs,
 * ofs-pbj) the words they take anywhere on their line, --help and
 * --version, the cluster from OFS_CLUSTER, and the identity they connect
 * with (--identity IDDIR, OFS_IDENTITY, or --insecure) (ofs(1) and ofs-pbj(8),
 * OPTIONS and ENVIRONMENT).
 */
#ifndef OFS_CLI_COMMON_H
#define OFS_CLI_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_MAX_CLUSTER 16

/* A program's name and usage, for the messages of cli_value_ok. */
struct cli_prog {
	const char *name;        /* "ofs-pbj" */
	const char *usage;       /* the usage text (NULL: "(see NAME --help)") */
};

#define CLI_VALUE_DASH 1u    /* "-" alone is a value: standard input or output */
#define CLI_VALUE_NO_HELP 2u /* "--help" and "-h" are refused as any option word
                                is (where the caller cannot stop and exit 0) */

/*
 * May the word w be taken as `what` - an operand ("CADIR") or an option's
 * value ("--data")? A word that begins with '-' never is (ofs-pbj(8), OPTIONS): it is
 * an option, and taking it for a path or a name made files and schedules
 * named "--help". true: take it. false: it is refused, with *status the
 * program's exit status: 0 after p's usage on stdout when w is "--help"
 * or "-h" (help asked for where a value goes; not with
 * CLI_VALUE_NO_HELP), else 2 after
 * "NAME: WHAT 'W': a word that begins with '-' is an option, ..." and the
 * usage on stderr.
 */
bool cli_value_ok(const struct cli_prog *p, const char *what, const char *w, unsigned flags,
		  int *status);

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
	bool help;               /* --help or -h after the command (before
	                            any "--"), or in place of a value */
	struct tls_conf *tls;    /* loaded by cli_line_security (owned) */
	char *env;               /* (OFS_CLUSTER's copy, owned) */
	char why[160];           /* (cli_line_parse's message, when made) */
};

#define CLI_LINE_PBJ 1u      /* --json and --db are taken out too */

/* Take the common words out of argv: --help and -h anywhere (before a
 * "--") set help, and so does either in place of the value of --cluster,
 * --identity or --db, which refuse any other word that begins with '-'.
 * 0, or -EINVAL with *why a usage message; -ENOMEM. Free with
 * cli_line_free either way. */
int cli_line_parse(int argc, char **argv, unsigned flags, struct cli_line *l, const char **why);
/* --help or -h was given (help), or the command is help or --version:
 * printed (the usage of the command given, else all of it; or "PROG
 * VERSION"), true. */
bool cli_line_help(const struct cli_line *l, const char *prog, const char *usage_text);
/* No --cluster: the servers OFS_CLUSTER lists (comma-separated).
 * -ENOENT: neither; -EINVAL, with l->why, for an address that is not
 * HOST:PORT; -ENOMEM. */
int cli_line_cluster(struct cli_line *l);
/*
 * `PROG CMD [SUB] --help`: the lines of usage_text about cmd (and sub,
 * when some line is about both) with their continuation lines, on
 * stdout; all of usage_text when no line is (cmd NULL too). A usage
 * line is one indented at most 8 columns (or after "usage: "), its words
 * after "PROG "; a continuation is indented deeper.
 */
void cli_usage_for(const char *usage_text, const char *prog, const char *cmd, const char *sub);
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
