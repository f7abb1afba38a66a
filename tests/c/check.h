/* A few lines of test support shared by the C tests: CHECK fails the
 * program with the file, line and expression, and counts what it checked. */
#ifndef WEIR_TEST_CHECK_H
#define WEIR_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_count = 0;

#define CHECK(expr)                                                          \
    do {                                                                     \
        check_count++;                                                       \
        if (!(expr)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #expr);                                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define CHECK_STATUS(call, expected) CHECK((call) == (expected))

/* Prints the closing line of a C test program. */
#define CHECK_DONE()                                             \
    do {                                                         \
        printf("%s: %d checks passed\n", __FILE__, check_count); \
        return 0;                                                \
    } while (0)

#endif
