// The header compiles as C++ (-std=c++11 -Wall -Wextra -Wpedantic -Werror),
// and the library links and answers from a C++ program.
#include <cstdio>
#include <cstring>

#include "weir.h"

int main() {
    if (std::strcmp(weir_version(), WEIR_VERSION) != 0) {
        std::fprintf(stderr, "library %s, header %s\n", weir_version(), WEIR_VERSION);
        return 1;
    }
    weir_gate *gate = nullptr;
    if (weir_gate_new(1, &gate) != WEIR_OK || !weir_gate_enter(gate) || weir_gate_enter(gate)) {
        return 1;
    }
    weir_gate_free(gate);
    std::printf("header.cpp: the header compiles and links as C++\n");
    return 0;
}
