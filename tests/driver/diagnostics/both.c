/* A front-end warning and a backend warning in one unit: clang counts them together. */
void legacy(void) __attribute__((warning("legacy() is going away")));

int both(int x) {
    int unused;
    legacy();
    return x;
}
