/*
 * ofs_repair.h - libofs's calls for repair: they change structure
 * directly (an entry, a back reference, a handle, a part) and are not for
 * ordinary clients. ofs-server's repair tasks and the move step use them,
 * as a client of the cluster.
 */
#ifndef OFS_CLIENT_REPAIR_H
#define OFS_CLIENT_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "client/ofs.h"
#include "lib/proto.h"

/*
 * ofs_link_object makes an entry at path (its directory must exist; an
 *   existing name is -EEXIST) for an existing metafile or directory h,
 *   then rewrites the object's back reference to name that entry;
 * ofs_adopt_part gives a dfile (with size bytes) or a dirdata whose owner
 *   is gone a new owner - a one-stripe metafile or a directory with that
 *   one dirdata - linked at path, and rewrites the part's back reference;
 * ofs_unlink_entry removes entry name from dirdata (the objects it named
 *   stay), returning what it named;
 * ofs_set_backref rewrites an object's back reference on every copy;
 * ofs_setattr_handle and ofs_relink_entry rewrite handles (the move step).
 */
int ofs_link_object(struct ofs_client *c, const char *path, const struct ofs_handle *h,
		    uint8_t type);
int ofs_adopt_part(struct ofs_client *c, const char *path, const struct ofs_handle *part,
		   uint8_t type, uint64_t size);
int ofs_unlink_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		     struct ofs_dirent *removed);
/* For repair, a second owner's own part in place of a shared one: a new
 * object of type (as many copies as part, placed afresh) with back
 * reference br - a dfile holding part's first size bytes, durable; a
 * dirdata empty (the entries stay with the owner their back references
 * name). On failure nothing of it is left. ofs_remove_part removes one
 * object (all its copies). */
int ofs_copy_part(struct ofs_client *c, const struct ofs_handle *part, uint8_t type,
		  uint64_t size, const struct ofs_backref *br, struct ofs_handle *out);
int ofs_remove_part(struct ofs_client *c, const struct ofs_handle *part);
/* DIRENT_CREATE of name -> d in dirdata itself (flags as ofs_relink_entry). */
int ofs_set_entry(struct ofs_client *c, const struct ofs_handle *dirdata, const char *name,
		  const struct ofs_dirent *d, uint32_t flags);
int ofs_set_backref(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_backref *br);
/* SETATTR of the fields mask selects, through the object's primary. */
int ofs_setattr_handle(struct ofs_client *c, const struct ofs_handle *h, uint32_t mask,
		       const struct ofs_attr *a);
/* The dirdata of directory dir (its attributes) that holds entry name. */
int ofs_dirdata_for(const struct ofs_attr *dir, const char *name, struct ofs_handle *dd);
/* Point entry name of directory dir at d: flags OFS_DIRENT_REPLACE
 * replaces what it named; 0 makes it only when the name is free
 * (-EEXIST otherwise). -ENOENT: the dirdata exists nowhere. */
int ofs_relink_entry(struct ofs_client *c, const struct ofs_handle *dir, const char *name,
		     const struct ofs_dirent *d, uint32_t flags);
/* Create object h (its OID, on its servers) with attributes a: for
 * repair, a lost part recreated empty where its owner expects it.
 * -EEXIST when a copy holds it already. */
int ofs_recreate(struct ofs_client *c, const struct ofs_handle *h, const struct ofs_attr *a);

#endif
