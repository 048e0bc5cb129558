/* A helper called three times: how much -Oz inlines it depends on -inline-threshold. */
static int mix(int a, int b) {
    int r = a;
    for (int i = 0; i < b; i++) r = r * 31 + (b ^ i) + (r >> 3);
    return r;
}

int first(int x) { return mix(x, 3); }
int second(int x) { return mix(x, 5) + 1; }
int third(int x) { return mix(x, 7) + 2; }
