/*
** tests/unit/unit_options.h: options in the C unit tests: set one as a
** CREATE would, and read one back as a ring table stores it (an
** algorithm's own options live in its block of the config, options.h).
*/
#ifndef CHASH_UNIT_OPTIONS_H
#define CHASH_UNIT_OPTIONS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* Set option zKey of cfg (a common one, or one of its algorithm's own) to
** zValue, as a CREATE would. Exits if the value is refused: a test's
** setup is wrong. */
static inline void unit_set_option(ring_config *cfg, const char *zKey,
                                   const char *zValue){
  static options_given given;
  char zErr[300];
  memset(&given, 0, sizeof(given));
  given.set = OPTION_ALGORITHM;          /* the algorithm is cfg's */
  if( options_set(cfg, &given, zKey, zValue, zErr, sizeof(zErr))
   || options_load(cfg, &given, zErr, sizeof(zErr)) ){
    printf("unit_set_option(%s, %s): %s\n", zKey, zValue, zErr);
    exit(2);
  }
}

/* Option zKey's value in cfg, as stored, into zOut ("" if cfg has none). */
static inline const char *unit_option_text(const ring_config *cfg, const char *zKey,
                                    char *zOut, size_t nOut){
  const char *zName;
  int bStore, bInteger;
  zOut[0] = 0;
  for(int i=0; options_stored(cfg, i, &zName, zOut, nOut, &bStore,
                              &bInteger); i++){
    if( strcmp(zName, zKey)==0 ) return zOut;
  }
  zOut[0] = 0;
  return zOut;
}

#endif
