/*
** config_yaml.h: the YAML documents of the nutcracker and envoy formats,
** read with libyaml (yaml.c).
*/
#ifndef CHASH_CONFIG_YAML_H
#define CHASH_CONFIG_YAML_H

#include <yaml.h>

#include "config.h"

/* Load text z (n bytes) as one document into *d (yaml_document_delete
** frees it). Returns 0, or 1 with f's error or nomem set. */
int config_yaml_load(const char *z, size_t n, yaml_document_t *d,
                     config_file *f);

/* The line (from 1) where node starts. */
int config_yaml_line(const yaml_node_t *node);

/* A scalar node's text and length, or NULL for other nodes. */
const char *config_yaml_scalar(const yaml_node_t *node, size_t *pn);

/* A byte offset into a loaded text. libyaml's marks count characters (a
** byte order mark not among them); the cursor keeps the last character and
** byte pair found, so that nodes looked up in the order of the text cost
** one pass over it. */
typedef struct config_yaml_cursor { size_t iChar, iByte; } config_yaml_cursor;

/* The byte of text z (n bytes) where node starts, through cursor c (zeroed
** before the first call). */
size_t config_yaml_offset(const char *z, size_t n, config_yaml_cursor *c,
                          const yaml_node_t *node);

/* The value of key zKey in mapping map, or NULL. */
yaml_node_t *config_yaml_get(yaml_document_t *d, const yaml_node_t *map,
                             const char *zKey);

/* Is node the scalar z? */
int config_yaml_is(const yaml_node_t *node, const char *z);

#endif
