/*
** tests/unit.h: the little harness the C unit tests share: CHECK() counts
** passes and failures, and an allocator for the ring core that counts live
** blocks and can fail the Nth allocation, so leaks and out-of-memory paths
** are visible. Include it in one test program each.
*/
#ifndef CHASH_UNIT_H
#define CHASH_UNIT_H

#include <stdio.h>
#include <stdlib.h>

#include "unit_options.h"

static int nPass = 0;
static int nFail = 0;

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

static void check(int ok, const char *zWhat, const char *zFile, int line){
  if( ok ){
    nPass++;
  }else{
    nFail++;
    printf("%s:%d: FAILED: %s\n", zFile, line, zWhat);
  }
}

static int nLive = 0;          /* blocks allocated and not yet freed */
static int nUntilFail = -1;    /* allocations left before one fails; -1 never */

static void *test_malloc(size_t n){
  if( nUntilFail==0 ) return NULL;
  if( nUntilFail>0 ) nUntilFail--;
  void *p = malloc(n);
  if( p ) nLive++;
  return p;
}

static void test_free(void *p){
  if( p ) nLive--;
  free(p);
}

/* Print the tally; the exit status of main. */
static int unit_summary(void){
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

#endif
