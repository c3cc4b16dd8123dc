/*
** tests/fuzz/fuzz_libmemcached.c: ch_config and ch_export of format
** libmemcached (fuzz_config.h).
*/
#define FUZZ_FORMAT "libmemcached"
#include "fuzz_config.h"
