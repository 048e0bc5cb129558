/* A signed/unsigned comparison and a narrowing: -Wall, -Wextra, -Wconversion. */
#include <string.h>

int count(const char *text, int limit) {
    int n = 0;
    for (size_t i = 0; i < strlen(text); i++)
        if (i < limit) n++;
    short narrow = n;
    return narrow;
}
