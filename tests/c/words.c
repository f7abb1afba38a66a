/* What the build guarantees for the words the caller places: the header's
 * compile-time WEIR_WORDS_LOCK_FREE agrees with the library's own answer, and
 * on a host with 64-bit atomics both say the words may be shared between
 * processes (so weir_bloom_*_in work). The firmware example checks the same
 * on Cortex-M, where both say no. */
#include <stdalign.h>
#include <string.h>

#include "check.h"
#include "weir.h"

int main(void) {
    weir_status shareable = weir_words_shareable();
    CHECK(shareable == WEIR_OK || shareable == WEIR_ERR_WORDS_NOT_SHAREABLE);
    CHECK((shareable == WEIR_OK) == (WEIR_WORDS_LOCK_FREE != 0));
#if defined(__x86_64__) || defined(__aarch64__)
    CHECK(shareable == WEIR_OK);
#endif
    CHECK(WEIR_ERR_WORDS_NOT_SHAREABLE == 30);
    CHECK(strcmp(weir_status_str(WEIR_ERR_WORDS_NOT_SHAREABLE), weir_status_str(-1)) != 0);

    /* Where words are shareable, a bloom region laid in caller memory works;
     * elsewhere it answers the status and writes nothing. */
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(10.0, 5, &limit), WEIR_OK);
    static alignas(64) uint64_t region[64]; /* WEIR_BLOOM_ALIGN */
    size_t len = weir_bloom_footprint(4);
    CHECK(len > 0 && len <= sizeof region);
    weir_status laid = weir_bloom_init_in(region, len, 4, 2, &limit, 1, 2);
    CHECK(laid == shareable);
    CHECK(weir_bloom_check_in(region, len) == (shareable == WEIR_OK ? WEIR_OK : shareable));
    CHECK_DONE();
}
