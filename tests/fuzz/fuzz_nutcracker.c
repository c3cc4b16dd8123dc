/*
** tests/fuzz/fuzz_nutcracker.c: ch_config and ch_export of format nutcracker
** (fuzz_config.h).
*/
#define FUZZ_FORMAT "nutcracker"
#include "fuzz_config.h"
