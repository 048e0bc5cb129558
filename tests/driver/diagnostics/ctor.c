/* A constructor: -fno-use-init-array puts it in .ctors, not .init_array. */
void announce(void);

__attribute__((constructor)) static void init(void) { announce(); }
