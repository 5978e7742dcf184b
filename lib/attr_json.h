/*
 * attr_json.h - an object's attributes as JSON, one spelling for every
 * document that shows them (`ofs stat --json`, `ofs-server inspect
 * --json`; ofs(1) gives the names).
 */
#ifndef OFS_ATTR_JSON_H
#define OFS_ATTR_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "lib/proto.h"

/* ["SIDHEX", ...] */
json_t *attr_json_sids(uint8_t n, const struct ofs_sid *sids);
/* Into o, the layout of a metafile ("dist", "strip_size", "replicas",
 * "confidence", "dfiles": [{"oid", "stripe", "sids"}]) or a directory
 * ("dirdata": [{"oid", "sids"}]); nothing for another type. */
void attr_json_layout(json_t *o, const struct ofs_attr *a);

#endif
