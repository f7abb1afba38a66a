/* Links weir through the imported target weir::weir from another CMake
 * project: the header is found, the static library and its system
 * libraries link, and a handle works. Exits 0 when all of that holds. */
#include <stdio.h>
#include <string.h>

#include "weir.h"

int main(void) {
    if (strcmp(weir_version(), WEIR_VERSION) != 0) {
        fprintf(stderr, "header %s, library %s\n", WEIR_VERSION, weir_version());
        return 1;
    }
    weir_gate *gate = NULL;
    if (weir_gate_new(1, &gate) != WEIR_OK) return 1;
    int ok = weir_gate_enter(gate) && !weir_gate_enter(gate) && weir_gate_held(gate) == 1;
    weir_gate_leave(gate);
    ok = ok && weir_gate_held(gate) == 0;
    weir_gate_free(gate);
    printf("weir %s from another CMake project: %s\n", weir_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
