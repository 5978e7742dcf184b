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

int cli_line_parse(int argc, char **argv, unsigned flags, struct cli_line *l, const char **why)
{
	memset(l, 0, sizeof(*l));
	l->rest = calloc((size_t)argc + 1, sizeof(*l->rest));
	if (!l->rest)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		const char *v;
		if (i > 0 && (v = value_of(argc, argv, &i, "--cluster")) != NULL) {
			*why = !*v ? "--cluster needs HOST:PORT"
			       : l->ncluster == CLI_MAX_CLUSTER ? "at most 16 --cluster" : NULL;
			if (*why)
				return -EINVAL;
			l->cluster[l->ncluster++] = v;
		} else if (i > 0 && (v = value_of(argc, argv, &i, "--identity")) != NULL) {
			*why = "--identity needs IDDIR";
			if (!*v)
				return -EINVAL;
			l->identity = v;
		} else if (i > 0 && !strcmp(argv[i], "--insecure")) {
			l->insecure = true;
		} else if (i > 0 && (flags & CLI_LINE_PBJ) && !strcmp(argv[i], "--json")) {
			l->json = true;
		} else if (i > 0 && (flags & CLI_LINE_PBJ) &&
			   (v = value_of(argc, argv, &i, "--db")) != NULL) {
			*why = "--db needs FILE";
			if (!*v)
				return -EINVAL;
			l->db = v;
		} else {
			l->rest[l->nrest++] = argv[i];
		}
	}
	*why = "missing command";
	return l->nrest < 2 ? -EINVAL : 0;
}

bool cli_line_help(const struct cli_line *l, const char *prog, const char *usage_text)
{
	const char *c = l->rest[1];

	if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
		fputs(usage_text, stdout);
		return true;
	}
	if (!strcmp(c, "--version")) {
		printf("%s %s\n", prog, OFS_VERSION);
		return true;
	}
	return false;
}

int cli_line_cluster(struct cli_line *l)
{
	const char *e = getenv("OFS_CLUSTER");

	if (l->ncluster)
		return 0;
	if (!e || !*e)
		return -ENOENT;
	l->env = strdup(e);
	if (!l->env)
		return -ENOMEM;
	for (char *tok = strtok(l->env, ","); tok && l->ncluster < CLI_MAX_CLUSTER;
	     tok = strtok(NULL, ","))
		l->cluster[l->ncluster++] = tok;
	return 0;
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
