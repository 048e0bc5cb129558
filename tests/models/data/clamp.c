/* Saturating arithmetic on arrays of 16-bit samples. */
#include <stdint.h>

static int16_t saturate(int32_t value) {
  if (value > INT16_MAX) return INT16_MAX;
  if (value < INT16_MIN) return INT16_MIN;
  return (int16_t)value;
}

void mix(int16_t *out, const int16_t *a, const int16_t *b, int n, int gain) {
  for (int i = 0; i < n; i++) out[i] = saturate(((int32_t)a[i] + b[i]) * gain / 16);
}

int32_t energy(const int16_t *x, int n) {
  int32_t sum = 0;
  for (int i = 0; i < n; i++) sum += (x[i] * x[i]) >> 4;
  return sum;
}
