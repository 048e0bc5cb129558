/* A call to a deprecated function: warned by default. */
__attribute__((deprecated("use new_api() instead"))) int old_api(void);

int caller(void) { return old_api(); }
