/*
** tests/fuzz/fuzz_envoy.c: ch_config and ch_export of format envoy
** (fuzz_config.h).
*/
#define FUZZ_FORMAT "envoy"
#include "fuzz_config.h"
