/*
** tests/fuzz/fuzz_pymemcache.c: ch_config and ch_export of format
** pymemcache (fuzz_config.h).
*/
#define FUZZ_FORMAT "pymemcache"
#include "fuzz_config.h"
