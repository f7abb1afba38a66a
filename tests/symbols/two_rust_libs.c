/* Linked with -Wl,--whole-archive over libweir.a and a second, unrelated
 * Rust static library (tests/other-rust-lib): both must link into one
 * program, and both must answer. */
#include <stdio.h>
#include <string.h>

#include "weir.h"

int other_rust_answer(int n);

int main(void) {
    weir_gate *gate = NULL;
    int ok = weir_gate_new(1, &gate) == WEIR_OK && weir_gate_enter(gate) && !weir_gate_enter(gate);
    weir_gate_free(gate);
    ok = ok && strcmp(weir_version(), WEIR_VERSION) == 0;
    ok = ok && other_rust_answer(42) == 12;
    printf("weir %s and another Rust library in one program: %s\n", weir_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
