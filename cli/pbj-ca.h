/*
 * pbj-ca.h - ofs-pbj ca: the cluster's certificate authority from the
 * command line (ca.h does the work; ofs-pbj(8), "ca").
 */
#ifndef OFS_CLI_PBJ_CA_H
#define OFS_CLI_PBJ_CA_H

#include <stddef.h>

/* argv[0] is "ca"; cluster: where revoke sends (the connection's
 * identity already set, conn_security). Returns the exit status. */
int pbj_ca_main(int argc, char **argv, const char *const *cluster, size_t ncluster);

#endif
