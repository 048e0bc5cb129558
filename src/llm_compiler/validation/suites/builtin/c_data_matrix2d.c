// exercises: 2-D arrays, pointer-to-array parameters, matrix multiply, in-place transpose, recursive cofactor determinant, spiral traversal
// Multiplies, transposes and traverses small integer matrices and computes a 4x4 determinant by cofactor expansion.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void matmul(const int a[3][4], const int b[4][2], int c[3][2]) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            int s = 0;
            for (int k = 0; k < 4; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
}

void transpose4(int m[4][4]) {
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) { int t = m[i][j]; m[i][j] = m[j][i]; m[j][i] = t; }
}

long det(int m[4][4], int n) {
    if (n == 1) return m[0][0];
    long total = 0;
    int sub[4][4];
    for (int col = 0; col < n; col++) {
        for (int r = 1; r < n; r++)
            for (int c = 0, k = 0; c < n; c++)
                if (c != col) sub[r - 1][k++] = m[r][c];
        long term = m[0][col] * det(sub, n - 1);
        total += (col % 2) ? -term : term;
    }
    return total;
}

static int spiral(int rows, int cols, int m[][5], int *out) {
    int top = 0, bot = rows - 1, left = 0, right = cols - 1, n = 0;
    while (top <= bot && left <= right) {
        for (int c = left; c <= right; c++) out[n++] = m[top][c];
        top++;
        for (int r = top; r <= bot; r++) out[n++] = m[r][right];
        right--;
        if (top <= bot) { for (int c = right; c >= left; c--) out[n++] = m[bot][c]; bot--; }
        if (left <= right) { for (int r = bot; r >= top; r--) out[n++] = m[r][left]; left++; }
    }
    return n;
}

int main(void) {
    volatile int vscale = 1;
    int a[3][4], c[3][2];
    const int b[4][2] = { { 2, -1 }, { 0, 3 }, { 1, 1 }, { -2, 4 } };
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++) a[i][k] = (i * 4 + k + 1) * vscale;
    matmul((const int (*)[4])a, b, c);
    CHECK(c[0][0] == -3 && c[0][1] == 24 && c[1][0] == 1 && c[1][1] == 52 && c[2][0] == 5 && c[2][1] == 80);

    int d[4][4] = { { 3, 1, 4, 1 }, { 5, 9, 2, 6 }, { 5, 3, 5, 8 }, { 9, 7, 9, 3 } };
    d[0][0] *= vscale;
    CHECK(det(d, 4) == 98);
    transpose4(d);
    CHECK(d[0][1] == 5 && d[1][0] == 1 && d[3][2] == 8 && d[2][3] == 9);
    CHECK(det(d, 4) == 98);
    int tmp[4]; /* swapping two rows negates the determinant */
    for (int j = 0; j < 4; j++) { tmp[j] = d[1][j]; d[1][j] = d[2][j]; d[2][j] = tmp[j]; }
    CHECK(det(d, 4) == -98);

    int s[4][5], out[20];
    for (int r = 0; r < 4; r++)
        for (int q = 0; q < 5; q++) s[r][q] = (r * 5 + q) * vscale;
    static const int want[20] = { 0, 1, 2, 3, 4, 9, 14, 19, 18, 17, 16, 15, 10, 5, 6, 7, 8, 13, 12, 11 };
    CHECK(spiral(4, 5, s, out) == 20);
    for (int i = 0; i < 20; i++) CHECK(out[i] == want[i]);
    CHECK(spiral(1, 5, s, out) == 5 && out[4] == 4);
    CHECK(spiral(3, 1, s, out) == 3 && out[2] == 10);

    unsigned sum = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) sum = sum * 41u + (unsigned)c[i][j];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) sum = sum * 3u + (unsigned)d[i][j];
    printf("c_data_matrix2d: %u\n", sum);
    return 0;
}
