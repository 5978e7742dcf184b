/* tool.h - `ofs-server tool`, the low-level object tool (tool.c). */
#ifndef OFS_TOOL_H
#define OFS_TOOL_H

#include <stdbool.h>

/* Run tool command argv[0] with its arguments on data dir data; returns
 * the exit status (0, 2 bad usage, 3 failure). */
int tool_main(const char *data, int argc, char **argv, bool json);
/* The tool's usage on stdout. */
void tool_help(void);

#endif
