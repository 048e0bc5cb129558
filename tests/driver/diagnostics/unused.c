/* An unused local and an unused parameter: -Wall and -Wextra warn. */
static int helper(int value, int unused_parameter) {
    int unused_local;
    return value * 2;
}

int api(int x) { return helper(x, 0); }
