/*
** catalog.c: prints what the build knows of itself as JSON, for make gen
** (tests/gen/lists_gen.py writes the lists of algorithms, hashes and
** options in docs/ and tests/ from it). Linked with ext/core and
** ext/algos, so the lists come from the registry and the option and hash
** tables themselves, never from a second list kept by hand.
**
**   {"default_algorithm": "ring",
**    "algorithms": [{"name", "default_hash", "units", "unit_name",
**                    "lists_units", "exact_diff", "options", "hashes",
**                    "doc"}, ...],
**    "hashes": [{"name", "bits", "seeded"}, ...],
**    "options": ["algorithm", "hash", ...]}
**
** An algorithm's "options" are the names of every option it takes, in
** the option table's order; its "hashes" the names of the hashes its
** options check takes (the hash option given, every other at its default);
** "doc" holds its ring_algo_doc fields (null where one is NULL).
*/
#include <stdio.h>

#include "algo.h"
#include "options.h"

/* s as a JSON string (or null). */
static void json_string(const char *s){
  if( s==NULL ){
    fputs("null", stdout);
    return;
  }
  putchar('"');
  for(const unsigned char *p=(const unsigned char *)s; *p; p++){
    if( *p=='"' || *p=='\\' ) printf("\\%c", *p);
    else if( *p<0x20 ) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

static const char *units_kind(ring_units_kind k){
  switch( k ){
    case RING_UNITS_POINTS:  return "points";
    case RING_UNITS_SLOTS:   return "slots";
    case RING_UNITS_BUCKETS: return "buckets";
    default:                 return "none";
  }
}

static void print_doc(const ring_algo_doc *d){
  const struct { const char *key, *value; } f[] = {
    { "summary", d->summary }, { "reproduces", d->reproduces },
    { "cost", d->cost }, { "weights", d->weights }, { "remove", d->remove },
    { "movement", d->movement }, { "options", d->options },
    { "points", d->points }, { "arcs", d->arcs }, { "diff", d->diff },
    { "replicas", d->replicas },
  };
  putchar('{');
  for(size_t i=0; i<sizeof(f)/sizeof(f[0]); i++){
    printf("%s\"%s\": ", i ? ", " : "", f[i].key);
    json_string(f[i].value);
  }
  putchar('}');
}

static void print_algorithm(const ring_algo *a){
  fputs("    {\"name\": ", stdout);
  json_string(a->name);
  fputs(", \"default_hash\": ", stdout);
  json_string(hash_name(a->default_hash));
  fputs(", \"units\": ", stdout);
  json_string(units_kind(a->units));
  fputs(", \"unit_name\": ", stdout);
  json_string(a->unit_name);
  printf(", \"lists_units\": %s, \"exact_diff\": %s, \"options\": [",
         a->no_units ? "false" : "true", a->no_diff ? "false" : "true");
  int n = 0;
  for(int i=0; options_name_at(i); i++){
    if( !options_apply(a, i) ) continue;
    if( n++ ) fputs(", ", stdout);
    json_string(options_name_at(i));
  }
  fputs("], \"hashes\": [", stdout);
  n = 0;
  for(int h=0; h<HASH_COUNT; h++){
    ring_config cfg;
    char zErr[400];
    ring_config_default(&cfg);
    options_set_algorithm(&cfg, a);
    cfg.hash = (hash_id)h;
    if( options_check(&cfg, OPTION_HASH, zErr, sizeof(zErr)) ) continue;
    if( n++ ) fputs(", ", stdout);
    json_string(hash_name(h));
  }
  fputs("], \"columns\": [", stdout);
  for(int i=0; a->columns && a->columns[i].name; i++){
    fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
    json_string(a->columns[i].name);
    fputs(", \"example\": ", stdout);
    if( a->columns[i].example ) json_string(a->columns[i].example);
    else fputs("null", stdout);
    putchar('}');
  }
  fputs("],\n     \"doc\": ", stdout);
  print_doc(&a->doc);
  putchar('}');
}

int main(void){
  ring_config def;
  ring_config_default(&def);
  fputs("{\"default_algorithm\": ", stdout);
  json_string(def.algo->name);
  fputs(",\n \"algorithms\": [\n", stdout);
  for(int i=0; ring_algos[i]; i++){
    if( i ) fputs(",\n", stdout);
    print_algorithm(ring_algos[i]);
  }
  fputs("],\n \"hashes\": [\n", stdout);
  for(int h=0; h<HASH_COUNT; h++){
    printf("%s    {\"name\": ", h ? ",\n" : "");
    json_string(hash_name(h));
    printf(", \"bits\": %u, \"seeded\": %s}", hash_space_bits(h),
           hash_has_seed(h) ? "true" : "false");
  }
  fputs("],\n \"options\": [", stdout);
  for(int i=0; options_name_at(i); i++){
    if( i ) fputs(", ", stdout);
    json_string(options_name_at(i));
  }
  fputs("]}\n", stdout);
  return 0;
}
