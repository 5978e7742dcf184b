/*
 * path.h - parsing the paths users type.
 *
 * A path is absolute ("/a/b"), at most OFS_PATH_MAX bytes. Repeated and
 * trailing slashes are ignored, "." is dropped and ".." removes the
 * component before it (".." at the root stays at the root), as a shell
 * user expects. Every component must be a valid entry name.
 */
#ifndef OFS_PATH_H
#define OFS_PATH_H

#include <stddef.h>

#include "lib/proto.h"

#define OFS_PATH_MAX 4096
#define OFS_PATH_DEPTH 256

struct ofs_path {
	size_t n;                                  /* components; 0 = root */
	char comp[OFS_PATH_DEPTH][OFS_NAME_MAX + 1];
};

/*
 * Parse s into *p. Returns 0, or
 *   -EINVAL        not absolute, or empty
 *   -ENAMETOOLONG  longer than OFS_PATH_MAX, or a component over 255 bytes
 *   -OFS_ETOOBIG   deeper than OFS_PATH_DEPTH
 */
int path_parse(const char *s, struct ofs_path *p);

/* Format p as "/a/b" ("/" for the root) into buf of len bytes; returns
 * 0 or -ENAMETOOLONG. */
int path_format(const struct ofs_path *p, char *buf, size_t len);

#endif
