/* A parameter that shadows a global: -Wshadow. */
int level;

int deeper(int level) {
    int result = level;
    {
        int result = level * 2;
        return result;
    }
}
