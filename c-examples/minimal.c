/* The smallest weir program: a concurrency ceiling of two. */
#include <stdio.h>

#include "weir.h"

int main(void) {
    weir_gate *gate = NULL;
    if (weir_gate_new(2, &gate) != WEIR_OK) return 1;
    for (int call = 1; call <= 3; call++) {
        printf("call %d: %s\n", call, weir_gate_enter(gate) ? "let in" : "refused");
    }
    weir_gate_leave(gate);
    printf("after one leaves: %s\n", weir_gate_enter(gate) ? "let in" : "refused");
    weir_gate_free(gate);
    return 0;
}
