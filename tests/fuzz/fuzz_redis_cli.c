/*
** tests/fuzz/fuzz_redis_cli.c: ch_config and ch_export of format
** redis_cli (fuzz_config.h).
*/
#define FUZZ_FORMAT "redis_cli"
#include "fuzz_config.h"
