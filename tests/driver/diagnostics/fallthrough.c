/* A switch case that falls through: -Wimplicit-fallthrough. */
int classify(int c) {
    int kind = 0;
    switch (c) {
    case 1:
        kind += 1;
    case 2:
        kind += 2;
        break;
    default:
        kind = -1;
    }
    return kind;
}
