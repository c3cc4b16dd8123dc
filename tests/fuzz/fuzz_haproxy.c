/*
** tests/fuzz/fuzz_haproxy.c: ch_config and ch_export of format haproxy
** (fuzz_config.h).
*/
#define FUZZ_FORMAT "haproxy"
#include "fuzz_config.h"
