/* A downstream program: links the installed weir and uses a handle.
 * Exits 0 when the header and the library agree and the gate works. */
#include <stdio.h>
#include <string.h>

#include <weir.h>

int main(void) {
    if (strcmp(weir_version(), WEIR_VERSION) != 0) {
        fprintf(stderr, "header %s, library %s\n", WEIR_VERSION, weir_version());
        return 1;
    }
    weir_bucket *bucket = NULL;
    if (weir_bucket_new(1.0, 2.0, 0, &bucket) != WEIR_OK) return 1;
    int ok = weir_bucket_take(bucket, 0, 1.0) && weir_bucket_take(bucket, 0, 1.0) &&
             !weir_bucket_take(bucket, 0, 1.0) && weir_bucket_next(bucket, 0, 1.0) == 1000000000;
    weir_bucket_free(bucket);
    printf("installed weir %s: %s\n", weir_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
