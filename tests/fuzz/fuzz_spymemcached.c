/*
** tests/fuzz/fuzz_spymemcached.c: ch_config and ch_export of format
** spymemcached (fuzz_config.h).
*/
#define FUZZ_FORMAT "spymemcached"
#include "fuzz_config.h"
