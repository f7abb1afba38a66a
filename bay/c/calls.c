/* Whether weir accepts the policy of a bay panel whose "copy as C" is a
 * few weir.h calls (the limiters, the words, the bloom): the calls are
 * #included from BAY_POLICY as this function's body, and set `made`.
 * Prints "accepted" or "refused". The handles live until exit. */
#include <stdbool.h>
#include <stdio.h>

#include "weir.h"

/* The calls declare what the panel's own program would go on to use. */
#pragma GCC diagnostic ignored "-Wunused-variable"

int main(void) {
#include BAY_POLICY
    puts(made == WEIR_OK ? "accepted" : "refused");
    return 0;
}
