/* check.h - CHECK(cond, what) for the compat test programs: prints "ok   what", or
 * "FAIL what (file:line)" to stderr and exits 1. */
#ifndef GK_COMPAT_TEST_CHECK_H
#define GK_COMPAT_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, what)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "FAIL %s (%s:%d)\n", what, __FILE__, __LINE__); \
            exit(1);                                                        \
        }                                                                   \
        printf("ok   %s\n", what);                                          \
    } while (0)

#endif
