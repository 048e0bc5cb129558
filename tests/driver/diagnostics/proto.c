/* No prototypes: -Wstrict-prototypes, -Wmissing-prototypes (cJSON's -Werror build). */
int no_prototype() { return 1; }

int missing(int x) { return x + no_prototype(); }
