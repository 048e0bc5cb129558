/* A call to a function with the error attribute: the backend fails. */
void forbidden(void) __attribute__((error("forbidden() must not be called")));

void caller(void) { forbidden(); }
