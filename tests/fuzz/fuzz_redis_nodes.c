/*
** tests/fuzz/fuzz_redis_nodes.c: ch_config and ch_export of format
** redis_nodes (fuzz_config.h).
*/
#define FUZZ_FORMAT "redis_nodes"
#include "fuzz_config.h"
