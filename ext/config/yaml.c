/*
** yaml.c: YAML documents (and JSON, which libyaml reads as YAML) for the
** formats written in them, nutcracker and envoy: a document loaded by
** libyaml, with its nesting bounded, and the lookups those formats make.
*/
#include <stdio.h>
#include <string.h>

#include "config_yaml.h"

/* Nodes the depth check visits at most: an alias makes a node reachable
** twice (never a cycle: libyaml refers only to anchors already complete),
** so aliases of aliases could make a small text a huge tree. */
#define YAML_MAX_VISITS 1000000

/* The depth of node, at most CONFIG_MAX_DEPTH + 1 (deeper is not walked);
** CONFIG_MAX_DEPTH + 1 too once *pnVisit passes YAML_MAX_VISITS. */
static int yaml_depth(yaml_document_t *d, yaml_node_t *node, int depth,
                      long *pnVisit){
  if( ++*pnVisit>YAML_MAX_VISITS ) return CONFIG_MAX_DEPTH+1;
  if( node==NULL || depth>CONFIG_MAX_DEPTH ) return depth;
  int deepest = depth;
  if( node->type==YAML_SEQUENCE_NODE ){
    for(yaml_node_item_t *it=node->data.sequence.items.start;
        it<node->data.sequence.items.top && deepest<=CONFIG_MAX_DEPTH; it++){
      int k = yaml_depth(d, yaml_document_get_node(d, *it), depth+1,
                         pnVisit);
      if( k>deepest ) deepest = k;
    }
  }else if( node->type==YAML_MAPPING_NODE ){
    for(yaml_node_pair_t *pr=node->data.mapping.pairs.start;
        pr<node->data.mapping.pairs.top && deepest<=CONFIG_MAX_DEPTH; pr++){
      int k = yaml_depth(d, yaml_document_get_node(d, pr->value),
                         depth+1, pnVisit);
      if( k>deepest ) deepest = k;
    }
  }
  return deepest;
}

/* The byte offset in z of libyaml's character index iChar (a mark's),
** walking on from the cursor c where it can. */
static size_t yaml_char_offset(const char *z, size_t n, config_yaml_cursor *c,
                               size_t iChar){
  if( c->iByte==0 || iChar<c->iChar ){
    c->iChar = 0;
    c->iByte = n>=3 && memcmp(z, "\xEF\xBB\xBF", 3)==0 ? 3 : 0;
  }
  while( c->iChar<iChar && c->iByte<n ){
    c->iByte++;
    while( c->iByte<n && (z[c->iByte]&0xC0)==0x80 ) c->iByte++;
    c->iChar++;
  }
  return c->iByte;
}

/* Is character iChar of text z (n bytes) a ':' more than
** CONFIG_YAML_MAX_KEY characters after the start of its line, of its flow
** item or of the value before it? libyaml reads no longer key, and stops at
** its ':' saying only that a ':' or ',' is missing. A ',' or bracket inside
** a quoted key starts the count again, so a long key can go unnoticed
** here, never a short one noticed. */
static int yaml_long_key_at(const char *z, size_t n, size_t iChar){
  config_yaml_cursor c = { 0, 0 };
  size_t i = yaml_char_offset(z, n, &c, iChar);
  if( i>=n || z[i]!=':' ) return 0;
  size_t nChar = 0;
  while( i>0 ){
    char b = z[--i];
    if( b=='\n' || b=='{' || b=='[' || b==',' ) break;
    if( b==':' && z[i+1]==' ' ) break;
    if( (b&0xC0)!=0x80 ) nChar++;
  }
  return nChar>CONFIG_YAML_MAX_KEY;
}

/* The failure of a parser that stopped reading text z of n bytes. */
static void config_yaml_parser_fail(yaml_parser_t *parser, const char *z,
                                    size_t n, config_file *f){
  if( parser->error==YAML_MEMORY_ERROR ){
    f->nomem = 1;
  }else{
    char zHint[100] = "";
    if( yaml_long_key_at(z, n, parser->problem_mark.index) ){
      snprintf(zHint, sizeof(zHint), " (a key runs more than %d characters "
               "to its ':', longer than libyaml reads)", CONFIG_YAML_MAX_KEY);
    }
    config_fail(f, "line %d: %s%s%s%s", (int)parser->problem_mark.line+1,
                parser->problem ? parser->problem : "not YAML",
                parser->context ? " " : "",
                parser->context ? parser->context : "", zHint);
  }
}

/* libyaml loads a document of any depth, and only the first document of
** a text. So the text's events are read first: the nesting as libyaml
** sees it (a bracket inside a string is none), stopping as soon as it is
** too deep, and a second document, which the formats would silently leave
** out. 0, or 1 with the file's error set. */
static int yaml_events_check(const char *z, size_t n, config_file *f){
  yaml_parser_t parser;
  if( !yaml_parser_initialize(&parser) ){ f->nomem = 1; return 1; }
  yaml_parser_set_input_string(&parser, (const unsigned char *)z, n);
  int depth = 0, nDocument = 0, rc = 0;
  for(;;){
    yaml_event_t event;
    if( !yaml_parser_parse(&parser, &event) ){
      config_yaml_parser_fail(&parser, z, n, f);
      rc = 1;
      break;
    }
    yaml_event_type_t type = event.type;
    int line = (int)event.start_mark.line+1;
    yaml_event_delete(&event);
    if( type==YAML_STREAM_END_EVENT ) break;
    if( type==YAML_DOCUMENT_START_EVENT && ++nDocument>1 ){
      config_fail(f, "line %d: a second YAML document (the text is one "
                  "document)", line);
      rc = 1;
      break;
    }
    if( type==YAML_SEQUENCE_START_EVENT || type==YAML_MAPPING_START_EVENT ){
      if( ++depth>CONFIG_MAX_DEPTH+1 ){
        config_fail(f, "line %d: the document is nested more than %d deep",
                    line, CONFIG_MAX_DEPTH);
        rc = 1;
        break;
      }
    }else if( type==YAML_SEQUENCE_END_EVENT || type==YAML_MAPPING_END_EVENT ){
      depth--;
    }
  }
  yaml_parser_delete(&parser);
  return rc;
}

int config_yaml_load(const char *z, size_t n, yaml_document_t *d,
                     config_file *f){
  if( yaml_events_check(z, n, f) ) return 1;
  yaml_parser_t parser;
  if( !yaml_parser_initialize(&parser) ){ f->nomem = 1; return 1; }
  yaml_parser_set_input_string(&parser, (const unsigned char *)z, n);
  int ok = yaml_parser_load(&parser, d);
  if( !ok ){
    config_yaml_parser_fail(&parser, z, n, f);
    yaml_parser_delete(&parser);
    return 1;
  }
  yaml_parser_delete(&parser);
  yaml_node_t *root = yaml_document_get_root_node(d);
  long nVisit = 0;
  if( root && yaml_depth(d, root, 0, &nVisit)>CONFIG_MAX_DEPTH ){
    config_fail(f, "the document is nested more than %d deep, or its "
                "aliases make more than %d nodes", CONFIG_MAX_DEPTH,
                YAML_MAX_VISITS);
    yaml_document_delete(d);
    return 1;
  }
  return 0;
}

int config_yaml_line(const yaml_node_t *node){
  return node ? (int)node->start_mark.line+1 : 0;
}

size_t config_yaml_offset(const char *z, size_t n, config_yaml_cursor *c,
                          const yaml_node_t *node){
  return yaml_char_offset(z, n, c, node->start_mark.index);
}

const char *config_yaml_scalar(const yaml_node_t *node, size_t *pn){
  if( node==NULL || node->type!=YAML_SCALAR_NODE ) return NULL;
  if( pn ) *pn = node->data.scalar.length;
  return (const char *)node->data.scalar.value;
}

yaml_node_t *config_yaml_get(yaml_document_t *d, const yaml_node_t *map,
                             const char *zKey){
  if( map==NULL || map->type!=YAML_MAPPING_NODE ) return NULL;
  for(yaml_node_pair_t *pr=map->data.mapping.pairs.start;
      pr<map->data.mapping.pairs.top; pr++){
    size_t n;
    const char *z = config_yaml_scalar(yaml_document_get_node(d, pr->key),
                                       &n);
    if( z && n==strlen(zKey) && memcmp(z, zKey, n)==0 ){
      return yaml_document_get_node(d, pr->value);
    }
  }
  return NULL;
}

int config_yaml_is(const yaml_node_t *node, const char *z){
  size_t n;
  const char *zValue = config_yaml_scalar(node, &n);
  return zValue && n==strlen(z) && memcmp(zValue, z, n)==0;
}
