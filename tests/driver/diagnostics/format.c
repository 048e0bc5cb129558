/* printf with a wrong argument type and a non-literal format: -Wformat=2. */
#include <stdio.h>

void show(long value, const char *format) {
    printf("%d\n", value);
    printf(format);
}
