/*
** tests/fuzz/fuzz_nodetool_ring.c: ch_config and ch_export of format
** nodetool_ring (fuzz_config.h).
*/
#define FUZZ_FORMAT "nodetool_ring"
#include "fuzz_config.h"
