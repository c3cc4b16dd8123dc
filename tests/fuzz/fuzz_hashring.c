/*
** tests/fuzz/fuzz_hashring.c: ch_config and ch_export of format hashring
** (fuzz_config.h).
*/
#define FUZZ_FORMAT "hashring"
#include "fuzz_config.h"
