/* Nothing to gain over -Oz. */
int add(int a, int b) { return a + b; }
