/* A variable used uninitialized on one path: -Wall (-Wsometimes-uninitialized). */
int pick(int condition) {
    int value;
    if (condition) value = 1;
    return value;
}
