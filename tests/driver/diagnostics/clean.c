/* Nothing to warn about, in any of the corpus's builds. */
int clean_add(int a, int b);

int clean_add(int a, int b) { return a + b; }
