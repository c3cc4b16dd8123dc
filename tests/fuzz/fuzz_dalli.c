/*
** tests/fuzz/fuzz_dalli.c: ch_config and ch_export of format
** dalli (fuzz_config.h).
*/
#define FUZZ_FORMAT "dalli"
#include "fuzz_config.h"
