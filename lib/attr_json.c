/* attr_json.c - an object's attributes as JSON (see attr_json.h). */
#include "lib/attr_json.h"

json_t *attr_json_sids(uint8_t n, const struct ofs_sid *sids)
{
	json_t *a = json_array();
	char hex[OFS_OID_HEX];

	for (uint8_t i = 0; i < n; i++) {
		sid_to_hex(sids[i], hex);
		json_array_append_new(a, json_string(hex));
	}
	return a;
}

void attr_json_layout(json_t *o, const struct ofs_attr *a)
{
	json_t *parts;
	char hex[OFS_OID_HEX];

	if (a->type != OFS_OBJ_METAFILE && a->type != OFS_OBJ_DIRECTORY)
		return;
	parts = json_array();
	for (uint16_t i = 0; i < a->nparts && i < OFS_MAX_STRIPES; i++) {
		json_t *p = json_object();
		oid_to_hex(a->parts[i].oid, hex);
		json_object_set_new(p, "oid", json_string(hex));
		if (a->type == OFS_OBJ_METAFILE)
			json_object_set_new(p, "stripe", json_integer(i));
		json_object_set_new(p, "sids", attr_json_sids(a->parts[i].nsids, a->parts[i].sids));
		json_array_append_new(parts, p);
	}
	if (a->type == OFS_OBJ_METAFILE) {
		json_object_set_new(o, "dist", json_string(a->dist));
		json_object_set_new(o, "strip_size", json_integer(a->strip_size));
		json_object_set_new(o, "replicas", json_integer(a->replicas));
		json_object_set_new(o, "confidence", json_integer(a->confidence));
		json_object_set_new(o, "dfiles", parts);
	} else {
		json_object_set_new(o, "dirdata", parts);
	}
}
