/* The build's -D and -I: an error without FEATURE, a #warning from a header. */
#include "config.h"

#ifndef FEATURE
#error FEATURE is not defined: build with -DFEATURE=1
#endif

int feature(void) { return FEATURE + HELPER_VALUE; }
