/* Inline assembly the integrated assembler rejects: a backend error. */
int bad_asm(int x) {
    __asm__("bogus_instruction %0" : "+r"(x));
    return x;
}
