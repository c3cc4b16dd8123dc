/*
** tests/fuzz/fuzz_nginx.c: ch_config and ch_export of format nginx
** (fuzz_config.h).
*/
#define FUZZ_FORMAT "nginx"
#include "fuzz_config.h"
