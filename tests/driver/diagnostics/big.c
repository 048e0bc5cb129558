/* A large stack frame: the backend's -Wframe-larger-than=. */
int use(char *buffer);

int big(void) {
    char buffer[4096];
    return use(buffer);
}
