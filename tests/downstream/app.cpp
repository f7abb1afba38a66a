// A downstream C++ program: the installed weir.hpp over the installed
// library. Exits 0 when a gate and a bucket answer as they should.
#include <cstdio>

#include <weir.hpp>

int main() {
    auto gate = weir::Gate::make(1);
    if (!gate) return 1;
    bool ok = gate->enter() && !gate->enter();
    gate->leave();
    auto bucket = weir::Bucket::make(1.0, 2.0, weir::instant(0));
    ok = ok && bucket && bucket->take(weir::instant(0)) && bucket->take(weir::instant(0)) &&
         !bucket->take(weir::instant(0));
    std::printf("installed weir.hpp over weir %s: %s\n", weir::version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
