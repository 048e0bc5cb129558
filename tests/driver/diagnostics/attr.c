/* A call to a function with the warning attribute: the backend warns. */
void legacy(void) __attribute__((warning("legacy() is going away")));

int main(void) {
    legacy();
    return 0;
}
