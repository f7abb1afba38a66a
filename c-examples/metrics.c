/* What weir decided, in Prometheus's text format.
 *
 * A server guards its routes with buckets, its backends with breakers and
 * its clients with a bloom array, turns each handle's counting on right
 * after making it, and serves the counts on its metrics page. Here a few
 * seconds of traffic run on the example's own clock (`now`, in
 * nanoseconds: no sleeping), and the page is printed to stdout: the
 * same metrics, with the same names and labels, as the Go collector
 * (go/prom) exports, so one dashboard reads both.
 *
 *   weir_decisions_total{type, name, decision="admitted"|"refused"|"error"}
 *   weir_units_total{type, name}
 *
 * It checks its own counts against the answers it saw and exits 1 if they
 * differ. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weir.h"

#define SEC INT64_C(1000000000)
#define MS INT64_C(1000000)

/* One exported handle: its type and name, and how to read its counts. */
typedef struct {
    const char *type;
    const char *name;
    weir_status (*read)(const void *handle, weir_counts *out);
    const void *handle;
} exported;

/* Each type's reading, through one signature. */
static weir_status read_bucket(const void *h, weir_counts *out) { return weir_bucket_read_counts(h, out); }
static weir_status read_breaker(const void *h, weir_counts *out) { return weir_breaker_read_counts(h, out); }
static weir_status read_bloom(const void *h, weir_counts *out) { return weir_bloom_read_counts(h, out); }

static int must(weir_status status, const char *what) {
    if (status != WEIR_OK) {
        fprintf(stderr, "%s: %s\n", what, weir_status_str(status));
        exit(1);
    }
    return 0;
}

/* The metrics page: every handle's counts, in the text format. */
static void print_page(const exported *handles, size_t n) {
    weir_counts counts[8];
    for (size_t i = 0; i < n; i++) {
        must(handles[i].read(handles[i].handle, &counts[i]), "read_counts");
    }
    printf("# HELP weir_decisions_total What a weir handle decided since counting began.\n");
    printf("# TYPE weir_decisions_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *decision[3] = {"admitted", "refused", "error"};
        uint64_t value[3] = {counts[i].admitted, counts[i].refused, counts[i].errors};
        for (int d = 0; d < 3; d++) {
            printf("weir_decisions_total{type=\"%s\",name=\"%s\",decision=\"%s\"} %" PRIu64 "\n",
                   handles[i].type, handles[i].name, decision[d], value[d]);
        }
    }
    printf("# HELP weir_units_total The units the admitted calls took.\n");
    printf("# TYPE weir_units_total counter\n");
    for (size_t i = 0; i < n; i++) {
        printf("weir_units_total{type=\"%s\",name=\"%s\"} %.17g\n", handles[i].type, handles[i].name,
               counts[i].units);
    }
}

int main(void) {
    int64_t now = 0;
    /* Two routes: search at 20 requests a second (bursts of 5), upload at
     * 1 MB a second, charged in bytes. */
    weir_bucket *search = NULL, *upload = NULL;
    must(weir_bucket_new(20, 5, now, &search), "weir_bucket_new");
    must(weir_bucket_new(1e6, 1e6, now, &upload), "weir_bucket_new");
    /* A backend behind a breaker, and a limit per client address. */
    weir_breaker *billing = NULL;
    must(weir_breaker_new(NULL, now, &billing), "weir_breaker_new");
    weir_rate_limit per_client;
    must(weir_rate_limit_new(2.0, 4, &per_client), "weir_rate_limit_new");
    weir_bloom *clients = NULL;
    must(weir_bloom_new(16, 3, &per_client, 0x5eed, 0xcafe, &clients), "weir_bloom_new");

    /* Counting on, right after making each. */
    must(weir_bucket_start_counting(search), "weir_bucket_start_counting");
    must(weir_bucket_start_counting(upload), "weir_bucket_start_counting");
    must(weir_breaker_start_counting(billing), "weir_breaker_start_counting");
    must(weir_bloom_start_counting(clients), "weir_bloom_start_counting");

    /* Three seconds of traffic, a request every 10 ms: search at 100 a
     * second (five times its rate), an upload of 30 KB, a billing call (the
     * backend fails every call from 1 s to 2 s) and eight clients taking
     * turns. */
    uint64_t seen[4][2] = {{0}};
    double uploaded = 0;
    uint64_t failed = 0;
    for (int i = 0; i < 300; i++, now += 10 * MS) {
        bool ok = weir_bucket_take(search, now, 1.0);
        seen[0][ok ? 0 : 1]++;
        ok = weir_bucket_take(upload, now, 30000.0);
        seen[1][ok ? 0 : 1]++;
        uploaded += ok ? 30000.0 : 0.0;
        weir_breaker_ticket ticket;
        ok = weir_breaker_allow(billing, now, (double)(i % 97) / 97.0, &ticket);
        seen[2][ok ? 0 : 1]++;
        if (ok) {
            bool down = now >= SEC && now < 2 * SEC;
            weir_status settled = down ? weir_breaker_fail(billing, &ticket, now + MS)
                                       : weir_breaker_pass(billing, &ticket, now + MS);
            must(settled, "settle");
            failed += down;
        }
        char client[16];
        int len = snprintf(client, sizeof client, "10.0.0.%d", i % 8);
        ok = weir_bloom_allow(clients, now, client, (size_t)len);
        seen[3][ok ? 0 : 1]++;
    }

    exported handles[] = {
        {"bucket", "search", read_bucket, search},
        {"bucket", "upload", read_bucket, upload},
        {"breaker", "billing", read_breaker, billing},
        {"bloom", "clients", read_bloom, clients},
    };
    size_t n = sizeof handles / sizeof handles[0];
    print_page(handles, n);

    /* The page says what the answers said. */
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        weir_counts c;
        must(handles[i].read(handles[i].handle, &c), "read_counts");
        if (c.admitted != seen[i][0] || c.refused != seen[i][1] || c.errors != 0) {
            fprintf(stderr, "%s %s: counted %" PRIu64 "/%" PRIu64 ", saw %" PRIu64 "/%" PRIu64 "\n",
                    handles[i].type, handles[i].name, c.admitted, c.refused, seen[i][0], seen[i][1]);
            wrong = 1;
        }
    }
    weir_counts up;
    must(weir_bucket_read_counts(upload, &up), "weir_bucket_read_counts");
    wrong |= up.units != uploaded;
    /* A handle that does not count says so. */
    weir_bucket *plain = NULL;
    must(weir_bucket_new(1, 1, now, &plain), "weir_bucket_new");
    wrong |= weir_bucket_read_counts(plain, &up) != WEIR_ERR_COUNTS_OFF;
    fprintf(stderr, "billing: %" PRIu64 " calls failed\n", failed);

    weir_bucket_free(plain);
    weir_bloom_free(clients);
    weir_breaker_free(billing);
    weir_bucket_free(upload);
    weir_bucket_free(search);
    return wrong;
}
