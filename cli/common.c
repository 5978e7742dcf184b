/* common.c - what the client programs read the same way (see common.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"

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

void cli_line_free(struct cli_line *l)
{
	free(l->rest);
	free(l->env);
	l->rest = NULL;
	l->env = NULL;
}
