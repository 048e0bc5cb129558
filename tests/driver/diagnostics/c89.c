/* C99 features in a -std=c89 -pedantic build. */
int mixed(int n) {
    int total = 0;
    total += n; // a C++ comment
    long long wide = n;
    for (int i = 0; i < n; i++) total += i;
    return total + (int)wide;
}
