/* common.c - what the client programs read the same way (see common.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "lib/conn.h"
#include "lib/net.h"
#include "lib/ofs_error.h"
#include "lib/tls.h"

static bool is_help(const char *w)
{
	return !strcmp(w, "--help") || !strcmp(w, "-h");
}

/* The one rule: a word that begins with '-' is an option, never a value
 * ("-" alone is, with CLI_VALUE_DASH). */
static bool is_option_word(const char *w, unsigned flags)
{
	return w[0] == '-' && !((flags & CLI_VALUE_DASH) && w[1] == '\0');
}

bool cli_value_ok(const struct cli_prog *p, const char *what, const char *w, unsigned flags,
		  int *status)
{
	if (!is_option_word(w, flags))
		return true;
	if (is_help(w) && !(flags & CLI_VALUE_NO_HELP)) {
		fputs(p->usage ? p->usage : "", stdout);
		if (!p->usage)
			printf("see %s --help\n", p->name);
		*status = 0;
		return false;
	}
	fprintf(stderr, "%s: %s '%s': a word that begins with '-' is an option, not a path, a "
		"name or a value\n", p->name, what, w);
	if (p->usage)
		fputs(p->usage, stderr);
	else
		fprintf(stderr, "(see %s --help)\n", p->name);
	*status = 2;
	return false;
}

/* argv[*i] is `name VALUE` or `name=VALUE`: the value (and *i past it),
 * "" when it is missing, NULL when argv[*i] is another word. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		return "";
	return argv[++*i];
}

/* v, the value of option o (a what): 0 to take it; help for "--help" or
 * "-h" there; -EINVAL, with *why, for none or another option word. */
static int take_value(struct cli_line *l, const char *o, const char *what, const char *v,
		      const char **why)
{
	if (is_help(v)) {
		l->help = true;
		return 0;
	}
	if (!*v)
		snprintf(l->why, sizeof(l->why), "%s needs %s", o, what);
	else if (is_option_word(v, 0))
		snprintf(l->why, sizeof(l->why), "%s needs %s, not '%.80s': a word that begins "
			 "with '-' is an option", o, what, v);
	else
		return 0;
	*why = l->why;
	return -EINVAL;
}

int cli_line_parse(int argc, char **argv, unsigned flags, struct cli_line *l, const char **why)
{
	bool options = true;             /* (until "--") */
	int rc = 0;

	memset(l, 0, sizeof(*l));
	l->rest = calloc((size_t)argc + 1, sizeof(*l->rest));
	if (!l->rest)
		return -ENOMEM;
	if (argc > 0)
		l->rest[l->nrest++] = argv[0];
	for (int i = 1; i < argc && !rc && !l->help; i++) {
		const char *v;
		options = options && strcmp(argv[i], "--") != 0;
		if (options && is_help(argv[i])) {
			l->help = true;
		} else if ((v = value_of(argc, argv, &i, "--cluster")) != NULL) {
			rc = take_value(l, "--cluster", "HOST:PORT", v, why);
			if (!rc && !l->help && l->ncluster == CLI_MAX_CLUSTER) {
				*why = "at most 16 --cluster";
				rc = -EINVAL;
			} else if (!rc && !l->help) {
				l->cluster[l->ncluster++] = v;
			}
		} else if ((v = value_of(argc, argv, &i, "--identity")) != NULL) {
			rc = take_value(l, "--identity", "IDDIR", v, why);
			l->identity = rc || l->help ? NULL : v;
		} else if (!strcmp(argv[i], "--insecure")) {
			l->insecure = true;
		} else if ((flags & CLI_LINE_PBJ) && !strcmp(argv[i], "--json")) {
			l->json = true;
		} else if ((flags & CLI_LINE_PBJ) && (v = value_of(argc, argv, &i, "--db")) != NULL) {
			rc = take_value(l, "--db", "FILE", v, why);
			l->db = rc || l->help ? NULL : v;
		} else {
			l->rest[l->nrest++] = argv[i];
		}
	}
	if (rc || l->help)
		return rc;
	*why = "missing command";
	return l->nrest < 2 ? -EINVAL : 0;
}

/* The text of a usage line after its indent, "usage: " and "PROG ". */
static const char *usage_words(const char *line, size_t len, const char *prog, size_t *indent)
{
	const char *t = line, *end = line + len;
	size_t n = strlen(prog);

	while (t < end && *t == ' ')
		t++;
	*indent = (size_t)(t - line);
	if ((size_t)(end - t) > 7 && !strncmp(t, "usage: ", 7)) {
		t += 7;
		*indent = 0;
	}
	if ((size_t)(end - t) > n && !strncmp(t, prog, n) && t[n] == ' ')
		t += n + 1;
	return t;
}

/* Whether the usage line's words t (to end) begin with cmd [sub], or
 * name it as an alternative ("pause JOB | resume JOB"). */
static bool usage_names(const char *t, const char *end, const char *cmd, const char *sub)
{
	size_t n = strlen(cmd), m = sub ? strlen(sub) : 0;
	const char *p = t;

	for (;;) {
		if ((size_t)(end - p) >= n && !strncmp(p, cmd, n) && (p + n == end || p[n] == ' ') &&
		    (!sub || ((size_t)(end - p) > n + m && !strncmp(p + n + 1, sub, m) &&
			      (p + n + 1 + m == end || p[n + 1 + m] == ' '))))
			return true;
		p = memmem(p, (size_t)(end - p), "| ", 2);
		if (!p)
			return false;
		p += 2;
	}
}

/* Print the lines of usage_text about cmd [sub] and their continuation
 * lines; 0 when none is. */
static size_t usage_lines(const char *usage_text, const char *prog, const char *cmd,
			  const char *sub)
{
	const char *line = usage_text;
	size_t shown = 0, at_indent = 0;
	bool showing = false;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line), indent;
		const char *t = usage_words(line, len, prog, &indent);
		bool starts = indent <= 8 && t < line + len && *t >= 'a' && *t <= 'z';
		if (starts) {
			showing = usage_names(t, line + len, cmd, sub);
			at_indent = indent;
		} else if (showing && indent <= at_indent) {
			showing = false;
		}
		if (showing && !shown)   /* "usage: PROG words" */
			printf("usage: %s %.*s\n", prog, (int)(line + len - t), t);
		else if (showing)
			printf("%.*s\n", (int)len, line);
		shown += showing;
		line += len + (nl ? 1 : 0);
	}
	return shown;
}

void cli_usage_for(const char *usage_text, const char *prog, const char *cmd, const char *sub)
{
	if (cmd && sub && usage_lines(usage_text, prog, cmd, sub))
		return;
	if (cmd && usage_lines(usage_text, prog, cmd, NULL))
		return;
	fputs(usage_text, stdout);
}

bool cli_line_help(const struct cli_line *l, const char *prog, const char *usage_text)
{
	const char *c = l->nrest > 1 ? l->rest[1] : "";

	if (l->help && l->nrest > 1) {
		cli_usage_for(usage_text, prog, c, l->nrest > 2 ? l->rest[2] : NULL);
		return true;
	}
	if (l->help || !strcmp(c, "help")) {
		cli_usage_for(usage_text, prog, l->nrest > 2 ? l->rest[2] : NULL,
			      l->nrest > 3 ? l->rest[3] : NULL);
		return true;
	}
	if (!strcmp(c, "--version")) {
		printf("%s %s\n", prog, OFS_VERSION);
		return true;
	}
	return false;
}

/* Every address of the cluster l names is HOST:PORT: 0, or -EINVAL with
 * l->why naming the one at fault and where it came from. */
static int cluster_check(struct cli_line *l, const char *from)
{
	for (size_t i = 0; i < l->ncluster; i++) {
		struct sockaddr_in sa;
		if (net_parse_addr(l->cluster[i], &sa) == 0)
			continue;
		snprintf(l->why, sizeof(l->why), "%s %.80s: not HOST:PORT (an IPv4 address or "
			 "localhost, and a port)", from, l->cluster[i]);
		return -EINVAL;
	}
	return 0;
}

int cli_line_cluster(struct cli_line *l)
{
	const char *e = getenv("OFS_CLUSTER");

	if (l->ncluster)
		return cluster_check(l, "--cluster");
	if (!e || !*e)
		return -ENOENT;
	l->env = strdup(e);
	if (!l->env)
		return -ENOMEM;
	for (char *tok = strtok(l->env, ","); tok && l->ncluster < CLI_MAX_CLUSTER;
	     tok = strtok(NULL, ","))
		l->cluster[l->ncluster++] = tok;
	return cluster_check(l, "OFS_CLUSTER entry");
}

int cli_line_security(struct cli_line *l, const char *prog, bool required)
{
	const char *dir = l->identity;
	char why[TLS_WHY_MAX];
	int rc;

	if (!dir || !*dir)
		dir = getenv("OFS_IDENTITY");
	if (l->identity && l->insecure) {
		fprintf(stderr, "%s: --identity and --insecure exclude each other\n", prog);
		return 2;
	}
	if (l->insecure) {
		for (size_t i = 0; i < l->ncluster; i++) {
			struct sockaddr_in sa;
			if (!net_parse_addr(l->cluster[i], &sa) &&
			    (ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
				fprintf(stderr, "%s: --insecure speaks plaintext to loopback (127.x.x.x) "
					"only, not to %s\n", prog, l->cluster[i]);
				return 2;
			}
		}
		conn_security(NULL, true);
		return 0;
	}
	if (!dir || !*dir) {
		if (!required)
			return 0;
		fprintf(stderr,
			"%s: no identity: give --identity IDDIR or set OFS_IDENTITY=IDDIR. An admin "
			"issues one with 'ofs-pbj ca issue CADIR --out IDDIR --user NAME --uid N' "
			"(or --admin NAME); a cluster run --insecure takes --insecure\n", prog);
		return 2;
	}
	rc = tls_conf_load(dir, &l->tls, why);
	if (rc) {
		fprintf(stderr, "%s: identity %s: %s\n", prog, dir, why);
		return 2;
	}
	conn_security(l->tls, false);
	/* Servers are checked against the cluster's CRL too (conn.h) */
	rc = conn_trust_dir(dir);
	if (rc) {
		fprintf(stderr, "%s: identity %s: its ca.pem: %s\n", prog, dir, ofs_strerror(rc));
		return 2;
	}
	return 0;
}

void cli_line_free(struct cli_line *l)
{
	tls_conf_free(l->tls);
	l->tls = NULL;
	free(l->rest);
	free(l->env);
	l->rest = NULL;
	l->env = NULL;
}
