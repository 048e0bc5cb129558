#include "nope.h"

int missing(void) { return NOPE; }
