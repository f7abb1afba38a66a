/* ngx_http_weir_limit_module: limits requests by key across all workers in
 * a fixed-size shared zone holding a weir bloom array or a weir keyed table
 * (docs/nginx.md).
 *
 *   weir_limit_zone KEY zone=NAME:SIZE rate=RATE burst=N [kind=smooth|window] [hashes=K]
 *                   [store=bloom|table] [keys=N] [overflow=refuse|admit|shared];
 *   weir_limit zone=NAME [dry_run];
 *   weir_limit_status CODE;
 *   weir_limit_log_level info|notice|warn|error;
 *   weir_limit_metrics [prometheus|json];   (a location: the counts page)
 *
 * A request is judged once, in the preaccess phase: the mark that says so
 * hangs on the request's pool (a cleanup), which internal redirects keep,
 * where a module ctx would be wiped by them. weir never delays: a request
 * is admitted or refused. */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <sys/random.h>

#include "weir.h"

/* The zone: a 64-byte module header (magic, shape, seed), then the bloom
 * region (version 2, 64-byte aligned: the slab pool gives a piece this
 * large whole pages) laid by weir_bloom_init_in or weir_bloom_init_gcra_in,
 * then the counts (below), outside the bloom's region. The shape is
 * compared on reload; a zone of the earlier layout (magic "weirgnx2", no
 * counts), should one ever be handed over, is refused, never misread. */
#define WEIR_NGX_MAGIC 0x33786e67726965ULL /* "weirgnx3" */
#define WEIR_NGX_MAGIC_2 0x32786e67726965ULL /* "weirgnx2": no counts */
#define WEIR_NGX_HEADER 64

/* What a zone decided, counted in the zone itself so every worker's
 * requests add up and a reload keeps them. Each worker adds to its own
 * 64-byte line (slot ngx_worker % WEIR_NGX_COUNT_SLOTS), so two workers
 * never write one cache line; the adds are atomic all the same, since an
 * old worker finishing its requests after a reload shares its slot with a
 * new one. A reading sums the slots. */
enum {
    WEIR_NGX_ADMITTED,         /* an enforced limit admitted the request */
    WEIR_NGX_REFUSED,          /* an enforced limit refused it */
    WEIR_NGX_DRY_RUN_ADMITTED, /* a dry-run limit would have admitted it */
    WEIR_NGX_DRY_RUN_REFUSED,  /* a dry-run limit would have refused it */
    WEIR_NGX_UNKEYED,          /* the key was empty: not limited */
    WEIR_NGX_ERRORS,           /* the key or the charge failed: a 500 */
    WEIR_NGX_DECISIONS
};
#define WEIR_NGX_COUNT_SLOTS 32
typedef struct {
    ngx_atomic_t n[WEIR_NGX_DECISIONS];
    u_char pad[64 - WEIR_NGX_DECISIONS * sizeof(ngx_atomic_t)];
} weir_ngx_counts_t;
#define WEIR_NGX_COUNTS_BYTES (WEIR_NGX_COUNT_SLOTS * sizeof(weir_ngx_counts_t))
typedef char weir_ngx_counts_line[sizeof(weir_ngx_counts_t) == 64 ? 1 : -1];

enum { WEIR_NGX_SMOOTH = 1, WEIR_NGX_WINDOW = 2 };
/* kind=smooth's largest burst: a bound a config can read, far below the
 * GCRA word's own (WEIR_GCRA_MAX_BURST). */
#define WEIR_NGX_MAX_BURST 1000000

/* Either kind's limit, as the zone holds it. */
typedef union {
    weir_gcra_limit gcra;
    weir_rate_limit rate;
    uint64_t bytes[3];
} weir_ngx_limit_t;

typedef struct {
    uint64_t magic;
    uint32_t kind;
    uint32_t size_log2;
    uint32_t hashes;
    uint32_t burst;
    weir_ngx_limit_t limit;
    uint64_t seed[2];
} weir_ngx_header_t;

/* This worker's memory of keys refused lately: a refusal at `now` with a
 * wait W means that all the key's words refuse until now + W (words refill
 * with time only; other charges only push them later), so a key found here
 * before its `until` is refused without touching the shared words. A miss
 * costs nothing but the look; a stale or colliding entry is a miss. */
#define WEIR_NGX_REFUSED_SLOTS 64
#define WEIR_NGX_REFUSED_KEY 46
typedef struct {
    int64_t until;
    uint16_t len;
    u_char key[WEIR_NGX_REFUSED_KEY];
} ngx_http_weir_refused_t;

typedef char weir_ngx_header_fits[sizeof(weir_ngx_header_t) <= WEIR_NGX_HEADER ? 1 : -1];

/* A zone holding a keyed table (store=table): the module's 64-byte header
 * below, then, at `offset` (the table's alignment, at least 64; the slab
 * pool gives a piece this large whole pages), the table's shared region
 * laid by weir_keyed_init_shared or weir_keyed_init_shared_rate, then the
 * counts, on a 64-byte line. A bloom zone's header starts with another
 * magic, so a reload that swaps the one for the other is refused, never
 * misread. */
#define WEIR_NGX_TABLE_MAGIC 0x31746e67726965ULL /* "weirgnt1" */
typedef struct {
    uint64_t magic;
    uint32_t kind;
    uint32_t overflow; /* WEIR_KEYED_OVERFLOW_* */
    uint64_t buckets;
    weir_ngx_limit_t limit;
    uint32_t burst;
    uint32_t offset; /* of the table's region, from this header */
} weir_ngx_table_header_t;
typedef char weir_ngx_table_header_fits[sizeof(weir_ngx_table_header_t) <= WEIR_NGX_HEADER ? 1 : -1];
/* keys=N sizes a table for N keys active at once at this chance of
 * overflow for a new key (weir_keyed_buckets_for). */
#define WEIR_NGX_TABLE_CHANCE 1e-9
/* The directive's message says 16. */
typedef char weir_ngx_max_items_16[WEIR_CHARGE_MAX_ITEMS == 16 ? 1 : -1];

typedef struct {
    ngx_str_t name;
    ngx_http_complex_value_t key;
    ngx_uint_t rate_milli; /* requests per 1000 s, for the headers */
    ngx_uint_t rate_per_minute; /* 1 when the rate was given in r/m */
    ngx_uint_t rate_number;
    ngx_uint_t burst;
    ngx_uint_t hashes;
    uint32_t size_log2;
    size_t size;
    ngx_uint_t kind;
    weir_ngx_limit_t limit; /* zeroed, then one kind's */
    ngx_shm_zone_t *shm_zone;
    weir_ngx_header_t *header; /* in the zone, once it is laid */
    void *region;              /* the bloom region */
    size_t region_len;
    ngx_int_t key_index;       /* the variable's index when KEY is one $variable, else NGX_ERROR */
    ngx_str_t key_header;      /* NAME when KEY is $http_NAME read by weir (see ngx_http_weir_key) */
    u_char *key_header_dashed; /* NAME with '-' for '_', as clients send it */
    ngx_str_t policy;          /* RateLimit-Policy's value, made once */
    ngx_str_t state_prefix;    /* RateLimit's value up to t= */
    ngx_http_weir_refused_t *refused; /* this worker's refusal cache */
    int64_t refused_until;     /* no cache entry is live at or after this */
    ngx_uint_t index;          /* in the main conf's zones: $weir_limit_zone's mark */
    ngx_flag_t key_binary;     /* KEY is $binary_remote_addr: logged in hex */
    weir_ngx_counts_t *counts; /* in the zone, once it is laid */
    ngx_flag_t relimited;      /* this config's limit is not the one the words were laid with */
    ngx_flag_t table;          /* store=table: a keyed table, not a bloom */
    uint64_t keys;             /* keys=N, or 0: the table is sized by the zone's bytes */
    uint64_t buckets;          /* keys=N's buckets, then the laid table's */
    uint32_t overflow;         /* overflow=: WEIR_KEYED_OVERFLOW_* */
    weir_keyed *keyed;         /* the table's handle, in the zone, once it is laid */
    weir_ngx_table_header_t *table_header; /* in the zone, once it is laid */
    ngx_flag_t publish;        /* a reload changed the table's rate or burst: published at the commit */
    ngx_uint_t was_rate_number;     /* the running config's rate and burst, for the notice */
    ngx_uint_t was_rate_per_minute;
    ngx_uint_t was_burst;
#if defined(WEIR_TEST_CLOCK)
    uint64_t test_seed[2];     /* test builds: test_seed=K0:K1, else getrandom */
    ngx_uint_t test_seeded;
    uint32_t test_words_log2;  /* test builds: test_words_log2=N, else 0 */
#endif
} ngx_http_weir_zone_t;

typedef struct {
    ngx_http_weir_zone_t *zone;
    ngx_flag_t dry_run;
} ngx_http_weir_limit_t;

typedef struct {
    ngx_array_t zones;   /* of ngx_http_weir_zone_t * */
    ngx_array_t pending; /* of ngx_http_weir_pending_t: names to resolve */
} ngx_http_weir_main_conf_t;

typedef struct {
    ngx_str_t name;
    ngx_http_weir_limit_t *limit;
    ngx_str_t file;
    ngx_uint_t line;
} ngx_http_weir_pending_t;

typedef struct {
    ngx_array_t *limits; /* of ngx_http_weir_limit_t */
    ngx_uint_t status_code;
    ngx_uint_t log_level;
    ngx_uint_t metrics; /* weir_limit_metrics's default format, or 0 */
} ngx_http_weir_loc_conf_t;

enum { WEIR_NGX_METRICS_PROMETHEUS = 1, WEIR_NGX_METRICS_JSON };

/* The judgement of one request, on its pool: the low 4 bits, and above
 * them 1 + the index of the zone that refused (or, in a dry run, would
 * have), 0 when none did. */
enum { WEIR_PASSED = 1, WEIR_REJECTED, WEIR_REJECTED_DRY_RUN };
#define WEIR_NGX_MARK_STATUS 0xf
#define WEIR_NGX_MARK_ZONE_SHIFT 4

static ngx_int_t ngx_http_weir_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_weir_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_weir_init_module(ngx_cycle_t *cycle);
static void *ngx_http_weir_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_weir_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_weir_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static char *ngx_http_weir_zone_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_weir_limit_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_weir_metrics_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_weir_bad(ngx_conf_t *cf, const char *directive, ngx_str_t *value, const char *why);

static ngx_conf_enum_t ngx_http_weir_log_levels[] = {{ngx_string("info"), NGX_LOG_INFO},
                                                     {ngx_string("notice"), NGX_LOG_NOTICE},
                                                     {ngx_string("warn"), NGX_LOG_WARN},
                                                     {ngx_string("error"), NGX_LOG_ERR},
                                                     {ngx_null_string, 0}};

static ngx_conf_num_bounds_t ngx_http_weir_status_bounds = {ngx_conf_check_num_bounds, 400, 599};

static ngx_command_t ngx_http_weir_commands[] = {
    {ngx_string("weir_limit_zone"), NGX_HTTP_MAIN_CONF | NGX_CONF_2MORE,
     ngx_http_weir_zone_directive, 0, 0, NULL},
    {ngx_string("weir_limit"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE12,
     ngx_http_weir_limit_directive, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL},
    {ngx_string("weir_limit_status"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_num_slot, NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_weir_loc_conf_t, status_code),
     &ngx_http_weir_status_bounds},
    {ngx_string("weir_limit_log_level"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1, ngx_conf_set_enum_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_weir_loc_conf_t, log_level), &ngx_http_weir_log_levels},
    {ngx_string("weir_limit_metrics"), NGX_HTTP_LOC_CONF | NGX_CONF_NOARGS | NGX_CONF_TAKE1,
     ngx_http_weir_metrics_directive, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL},
    ngx_null_command};

static ngx_http_module_t ngx_http_weir_limit_module_ctx = {
    ngx_http_weir_add_variables, ngx_http_weir_init, ngx_http_weir_create_main_conf, NULL, NULL, NULL,
    ngx_http_weir_create_loc_conf, ngx_http_weir_merge_loc_conf};

ngx_module_t ngx_http_weir_limit_module = {NGX_MODULE_V1,
                                           &ngx_http_weir_limit_module_ctx,
                                           ngx_http_weir_commands,
                                           NGX_HTTP_MODULE,
                                           NULL,
                                           ngx_http_weir_init_module,
                                           NULL,
                                           NULL,
                                           NULL,
                                           NULL,
                                           NULL,
                                           NGX_MODULE_V1_PADDING};

/* ---- the mark on the request's pool ---- */

/* The judgement, as an integer in the cleanup's data pointer: no second
 * allocation for a ctx. */
static void ngx_http_weir_cleanup(void *data) {
    (void)data;
}

static ngx_inline __attribute__((always_inline)) ngx_pool_cleanup_t *ngx_http_weir_mark(ngx_http_request_t *r) {
    for (ngx_pool_cleanup_t *c = r->pool->cleanup; c; c = c->next) {
        if (c->handler == ngx_http_weir_cleanup) return c;
    }
    return NULL;
}

/* nginx's cached monotonic clock (CLOCK_MONOTONIC, the same in every
 * worker), in nanoseconds: limit_req's clock, read once per event loop
 * turn rather than once per request. */
static int64_t ngx_http_weir_now(void) {
    return (int64_t)ngx_current_msec * 1000000;
}

#if defined(WEIR_TEST_CLOCK)
/* ---- the test clock (test builds only) ----
 *
 * Built only with -DWEIR_TEST_CLOCK (modules/nginx/build.sh with
 * WEIR_NGINX_TEST_CLOCK=1), for the conformance replays
 * (modules/nginx/test/replay.py). A request header X-Weir-Test-Msec: N
 * stands in for ngx_current_msec, so a request is judged at N ms on the
 * module's own millisecond clock; weir_limit_zone takes test_seed=K0:K1 (the
 * bloom's or the table's SipHash key, decimal) and test_words_log2=N (the
 * bloom's size). A release
 * build has none of this: it reads no such header and refuses the two
 * parameters as unknown. */
static ngx_str_t ngx_http_weir_test_msec = ngx_string("x-weir-test-msec");

static int64_t ngx_http_weir_test_now(ngx_http_request_t *r, int64_t now) {
    ngx_list_part_t *part = &r->headers_in.headers.part;
    ngx_table_elt_t *h = part->elts;
    for (ngx_uint_t i = 0;; i++) {
        if (i >= part->nelts) {
            if (part->next == NULL) break;
            part = part->next;
            h = part->elts;
            i = 0;
            if (part->nelts == 0) continue;
        }
        if (h[i].key.len != ngx_http_weir_test_msec.len ||
            ngx_strncasecmp(h[i].key.data, ngx_http_weir_test_msec.data, h[i].key.len) != 0)
            continue;
        off_t ms = ngx_atoof(h[i].value.data, h[i].value.len);
        if (ms == NGX_ERROR || ms > INT64_MAX / 1000000) return now;
        /* As ngx_http_weir_now turns ngx_current_msec into ns. */
        return (int64_t)(ngx_msec_t)ms * 1000000;
    }
    return now;
}

/* A decimal uint64_t (SipHash key halves use all 64 bits: past ngx_atoof's). */
static ngx_int_t ngx_http_weir_test_u64(u_char *p, size_t len, uint64_t *out) {
    uint64_t n = 0;
    if (len == 0) return NGX_ERROR;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return NGX_ERROR;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (n > (UINT64_MAX - d) / 10) return NGX_ERROR;
        n = n * 10 + d;
    }
    *out = n;
    return NGX_OK;
}

/* test_seed=K0:K1 and test_words_log2=N; NGX_DECLINED for any other. */
static ngx_int_t ngx_http_weir_test_parameter(ngx_http_weir_zone_t *zone, ngx_str_t *v) {
    if (v->len > 10 && ngx_strncmp(v->data, "test_seed=", 10) == 0) {
        u_char *colon = ngx_strlchr(v->data + 10, v->data + v->len, ':');
        if (colon == NULL) return NGX_ERROR;
        if (ngx_http_weir_test_u64(v->data + 10, colon - (v->data + 10), &zone->test_seed[0]) != NGX_OK ||
            ngx_http_weir_test_u64(colon + 1, v->data + v->len - (colon + 1), &zone->test_seed[1]) != NGX_OK)
            return NGX_ERROR;
        zone->test_seeded = 1;
        return NGX_OK;
    }
    if (v->len > 16 && ngx_strncmp(v->data, "test_words_log2=", 16) == 0) {
        ngx_int_t n = ngx_atoi(v->data + 16, v->len - 16);
        if (n < WEIR_BLOOM_MIN_SIZE_LOG2 || n > WEIR_BLOOM_MAX_SIZE_LOG2) return NGX_ERROR;
        zone->test_words_log2 = (uint32_t)n;
        return NGX_OK;
    }
    return NGX_DECLINED;
}
#endif

/* The key of `zone` for `r`: one indexed variable read when KEY is a lone
 * $variable (no script, no copy), the complex value otherwise. An absent
 * variable is the empty key. */
static ngx_inline __attribute__((always_inline)) ngx_int_t ngx_http_weir_key(ngx_http_request_t *r, ngx_http_weir_zone_t *zone, ngx_str_t *key) {
    if (zone->key_header.len != 0) {
        /* $http_NAME as nginx 1.22 reads a header without a variable of
         * its own: the first header whose lowercased name, with '-' as
         * '_', is NAME. Compared on the parser's lowercased name, with the
         * length first, instead of nginx's character loop over every
         * header. */
        ngx_list_part_t *part = &r->headers_in.headers.part;
        ngx_table_elt_t *h = part->elts;
        for (ngx_uint_t i = 0;; i++) {
            if (i >= part->nelts) {
                if (part->next == NULL) break;
                part = part->next;
                h = part->elts;
                i = 0;
                if (part->nelts == 0) continue;
            }
            if (h[i].key.len != zone->key_header.len || h[i].hash == 0) continue;
            if (ngx_memcmp(h[i].lowcase_key, zone->key_header_dashed, h[i].key.len) == 0) {
                *key = h[i].value;
                return NGX_OK;
            }
            ngx_uint_t n = 0; /* a name with '_' for some '-' (underscores_in_headers) */
            while (n < h[i].key.len) {
                u_char c = h[i].lowcase_key[n];
                if ((c == '-' ? '_' : c) != zone->key_header.data[n]) break;
                n++;
            }
            if (n == h[i].key.len) {
                *key = h[i].value;
                return NGX_OK;
            }
        }
        key->len = 0;
        return NGX_OK;
    }
    if (zone->key_index == NGX_ERROR) return ngx_http_complex_value(r, &zone->key, key);
    ngx_http_variable_value_t *vv = ngx_http_get_indexed_variable(r, zone->key_index);
    if (vv == NULL) return NGX_ERROR;
    key->data = vv->data;
    key->len = vv->not_found ? 0 : vv->len;
    return NGX_OK;
}

/* ---- the refusal cache ---- */

static ngx_http_weir_refused_t *ngx_http_weir_refused_slot(ngx_http_weir_zone_t *zone, ngx_str_t *key) {
    return &zone->refused[ngx_hash_key(key->data, key->len) & (WEIR_NGX_REFUSED_SLOTS - 1)];
}

/* The wait of a key remembered as refused at `now`, or 0. */
static ngx_inline __attribute__((always_inline)) int64_t ngx_http_weir_refused_wait(ngx_http_weir_zone_t *zone, ngx_str_t *key, int64_t now) {
    if (now >= zone->refused_until || key->len > WEIR_NGX_REFUSED_KEY) return 0;
    ngx_http_weir_refused_t *e = ngx_http_weir_refused_slot(zone, key);
    if (now >= e->until || e->len != key->len || ngx_memcmp(e->key, key->data, key->len) != 0) return 0;
    return e->until - now;
}

static void ngx_http_weir_refused_keep(ngx_http_weir_zone_t *zone, ngx_str_t *key, int64_t now, int64_t wait) {
    if (key->len > WEIR_NGX_REFUSED_KEY || wait <= 0 || wait > INT64_MAX - now) return;
    ngx_http_weir_refused_t *e = ngx_http_weir_refused_slot(zone, key);
    e->until = now + wait;
    e->len = (uint16_t)key->len;
    ngx_memcpy(e->key, key->data, key->len);
    if (e->until > zone->refused_until) zone->refused_until = e->until;
}

/* ---- the words ---- */

/* `key`'s item in `zone`, judged by this config's limit: the words keep
 * what they decided under an earlier config's rate and burst (a reload),
 * read under this one (docs/nginx.md). While the limit is the one the
 * region's header holds, the header's judges (NULL). */
static ngx_inline void ngx_http_weir_item(weir_charge_item *item, ngx_http_weir_zone_t *zone, ngx_str_t *key) {
    ngx_memzero(item, sizeof *item);
    item->kind = WEIR_CHARGE_BLOOM_IN;
    item->target = zone->region;
    item->target_len = zone->region_len;
    item->limit = zone->relimited ? &zone->limit : NULL;
    item->key = key->data;
    item->key_len = key->len;
    item->cost = 1;
}

/* ---- the keyed table ---- */

/* The wait of `key` in a table zone at `now` before its next request could
 * pass (0 if now), without charging. An unknown key answers 0. */
static int64_t ngx_http_weir_table_wait(ngx_http_weir_zone_t *zone, ngx_str_t *key, int64_t now) {
    int64_t wait;
    if (weir_keyed_next(zone->keyed, now, key->data, key->len, &wait) != WEIR_OK) return INT64_MAX;
    return wait;
}

/* Charges `key` in a table zone at `now`: 0 when admitted (by the key's
 * own word, or by the overflow policy), else the wait in ns (at least 1).
 * A refusal by the key's own word is remembered: that word only refills
 * with time. A refusal by the overflow policy is not (a slot may free at
 * any request); it answers a wait of 1 s, the table's nearest news. */
static ngx_inline __attribute__((always_inline)) int64_t ngx_http_weir_table_charge(ngx_http_weir_zone_t *zone, ngx_str_t *key, int64_t now) {
    uint32_t decision;
    if (weir_keyed_decide(zone->keyed, now, key->data, key->len, 1, &decision) != WEIR_OK)
        return INT64_MAX; /* refused, never cached */
    if (decision == WEIR_KEYED_ALLOWED || decision == WEIR_KEYED_OVERFLOW_ADMITTED) return 0;
    if (decision == WEIR_KEYED_OVERFLOW_REFUSED) return 1000000000;
    int64_t wait = ngx_http_weir_table_wait(zone, key, now);
    if (wait == INT64_MAX) return wait;
    if (wait < 1) wait = 1; /* refused now: whatever frees it is later */
    ngx_http_weir_refused_keep(zone, key, now, wait);
    return wait;
}

/* Charges `key` in `zone` at `now`: 0 when admitted, else the wait in ns
 * (at least 1) until the key would be. */
static ngx_inline __attribute__((always_inline)) int64_t ngx_http_weir_charge(ngx_http_weir_zone_t *zone, ngx_str_t *key, int64_t now) {
    int64_t wait = ngx_http_weir_refused_wait(zone, key, now);
    if (wait > 0) return wait;
    if (zone->table) return ngx_http_weir_table_charge(zone, key, now);
    if (!zone->relimited) {
        /* The limit the region's header holds: its own calls, the
         * cheapest path (docs/nginx.md gives both paths' cost). */
        if (weir_bloom_allow_in(zone->region, zone->region_len, now, key->data, key->len)) return 0;
        wait = weir_bloom_next_in(zone->region, zone->region_len, now, key->data, key->len);
    } else {
        weir_charge_item item;
        weir_charge_result charged;
        ngx_http_weir_item(&item, zone, key);
        if (weir_charge_all(&item, 1, now, &charged) != WEIR_OK) return INT64_MAX; /* refused, never cached */
        if (charged.admitted) return 0;
        wait = charged.wait;
    }
    if (wait < 1) wait = 1; /* refused now: whatever frees it is later */
    ngx_http_weir_refused_keep(zone, key, now, wait);
    return wait;
}

/* ---- headers on refusal ---- */

static ngx_str_t ngx_http_weir_retry_after = ngx_string("Retry-After");
static ngx_str_t ngx_http_weir_policy_name = ngx_string("RateLimit-Policy");
static ngx_str_t ngx_http_weir_state_name = ngx_string("RateLimit");

static ngx_int_t ngx_http_weir_header(ngx_http_request_t *r, ngx_str_t *name, u_char *value, size_t len) {
    ngx_table_elt_t *h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) return NGX_ERROR;
    h->hash = 1;
    h->key = *name;
    h->value.data = value;
    h->value.len = len;
    return NGX_OK;
}

/* Decimal digits of `n` written at `p`; returns the end. */
static u_char *ngx_http_weir_digits(u_char *p, uint64_t n) {
    u_char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (u_char)('0' + n % 10);
        n /= 10;
    } while (n);
    return ngx_cpymem(p, tmp + i, sizeof tmp - i);
}

static ngx_int_t ngx_http_weir_refusal_headers(ngx_http_request_t *r, ngx_http_weir_zone_t *zone, int64_t wait_ns) {
    /* Whole seconds, rounded up, at least 1. */
    int64_t retry = wait_ns == INT64_MAX ? 0 : (wait_ns + 999999999) / 1000000000;
    if (retry < 1) retry = 1;
    u_char *p = ngx_pnalloc(r->pool, 20 + zone->state_prefix.len + 20);
    if (p == NULL) return NGX_ERROR;
    u_char *end = ngx_http_weir_digits(p, (uint64_t)retry);
    size_t digits = end - p;
    if (ngx_http_weir_header(r, &ngx_http_weir_retry_after, p, digits) != NGX_OK) return NGX_ERROR;
    if (ngx_http_weir_header(r, &ngx_http_weir_policy_name, zone->policy.data, zone->policy.len) != NGX_OK)
        return NGX_ERROR;
    u_char *state = end;
    end = ngx_cpymem(state, zone->state_prefix.data, zone->state_prefix.len);
    end = ngx_cpymem(end, p, digits);
    return ngx_http_weir_header(r, &ngx_http_weir_state_name, state, end - state);
}

/* ---- counts, marks and keys in log lines ---- */

/* One more `decision` in `zone`, in this worker's slot. */
static ngx_inline void ngx_http_weir_count(ngx_http_weir_zone_t *zone, ngx_uint_t decision) {
    if (zone->counts == NULL) return; /* not laid: no request reaches here then */
    (void)ngx_atomic_fetch_add(&zone->counts[ngx_worker % WEIR_NGX_COUNT_SLOTS].n[decision], 1);
}

/* The mark of a judgement `status` made by `zone`. */
static ngx_inline uintptr_t ngx_http_weir_mark_of(uintptr_t status, ngx_http_weir_zone_t *zone) {
    return status | ((uintptr_t)(zone->index + 1) << WEIR_NGX_MARK_ZONE_SHIFT);
}

/* A key as a log line shows it: a binary key ($binary_remote_addr) as hex,
 * 0x7f000001; any other quoted, with '"' and '\' escaped and every byte
 * outside printable ASCII as \xHH, so a NUL, a newline or an escape
 * sequence from a client never reaches the log raw. The first
 * WEIR_NGX_KEY_LOGGED bytes are shown, then "..." for the rest. */
#define WEIR_NGX_KEY_LOGGED 256
#define WEIR_NGX_KEY_SHOWN (4 * WEIR_NGX_KEY_LOGGED + 8)

static size_t ngx_http_weir_show_key(u_char *out, ngx_http_weir_zone_t *zone, ngx_str_t *key) {
    static const u_char hex[] = "0123456789abcdef";
    size_t n = key->len < WEIR_NGX_KEY_LOGGED ? key->len : WEIR_NGX_KEY_LOGGED;
    u_char *p = out;
    if (zone->key_binary) {
        *p++ = '0';
        *p++ = 'x';
        for (size_t i = 0; i < n; i++) {
            *p++ = hex[key->data[i] >> 4];
            *p++ = hex[key->data[i] & 0xf];
        }
        if (n < key->len) p = ngx_cpymem(p, "...", 3);
        return p - out;
    }
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        u_char c = key->data[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = c;
        } else if (c < 0x20 || c > 0x7e) {
            *p++ = '\\';
            *p++ = 'x';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 0xf];
        } else {
            *p++ = c;
        }
    }
    *p++ = '"';
    if (n < key->len) p = ngx_cpymem(p, "...", 3);
    return p - out;
}

/* ---- the handler ---- */

#define WEIR_NGX_STACK_LIMITS 8

static ngx_int_t ngx_http_weir_refuse(ngx_http_request_t *r, ngx_http_weir_loc_conf_t *lcf,
                                      ngx_pool_cleanup_t *mark, ngx_http_weir_zone_t *zone, ngx_str_t *key,
                                      int64_t wait) {
    ngx_http_weir_count(zone, WEIR_NGX_REFUSED);
    if (r->connection->log->log_level >= lcf->log_level) {
        u_char shown[WEIR_NGX_KEY_SHOWN];
        size_t len = ngx_http_weir_show_key(shown, zone, key);
        ngx_log_error(lcf->log_level, r->connection->log, 0, "weir_limit: refused, zone \"%V\", key %*s",
                      &zone->name, len, shown);
    }
    mark->data = (void *)ngx_http_weir_mark_of(WEIR_REJECTED, zone);
    if (ngx_http_weir_refusal_headers(r, zone, wait) != NGX_OK) return NGX_HTTP_INTERNAL_SERVER_ERROR;
    return lcf->status_code;
}

static void ngx_http_weir_dry_refusal(ngx_http_request_t *r, ngx_http_weir_loc_conf_t *lcf,
                                      ngx_pool_cleanup_t *mark, ngx_http_weir_zone_t *zone, ngx_str_t *key) {
    ngx_http_weir_count(zone, WEIR_NGX_DRY_RUN_REFUSED);
    if (r->connection->log->log_level >= lcf->log_level) {
        u_char shown[WEIR_NGX_KEY_SHOWN];
        size_t len = ngx_http_weir_show_key(shown, zone, key);
        ngx_log_error(lcf->log_level, r->connection->log, 0,
                      "weir_limit: would refuse, dry run, zone \"%V\", key %*s", &zone->name, len, shown);
    }
    /* The first zone that would have refused names the request's mark. */
    if (((uintptr_t)mark->data & WEIR_NGX_MARK_STATUS) != WEIR_REJECTED_DRY_RUN)
        mark->data = (void *)ngx_http_weir_mark_of(WEIR_REJECTED_DRY_RUN, zone);
}

/* Every weir_limit of the location applies, all or nothing, as limit_req's
 * do: the enforced limits are charged in one weir_charge_all, which reads
 * them all, charges them in order and, if one refuses (another worker
 * spent it between the read and the charge), gives back the ones it
 * charged. So two workers cannot both be admitted on one unit left, and a
 * refusal charges none of the others (weir_charge_all states the slack: a
 * charge given back may have refused another request meanwhile, never
 * admitted one). A key remembered as refused is refused before any
 * charge. Dry-run limits are charged after, when the request is admitted. */
static ngx_int_t ngx_http_weir_handler(ngx_http_request_t *r) {
    if (r != r->main) return NGX_DECLINED;
    ngx_http_weir_loc_conf_t *lcf = ngx_http_get_module_loc_conf(r, ngx_http_weir_limit_module);
    if (lcf->limits == NULL) return NGX_DECLINED;
    if (ngx_http_weir_mark(r) != NULL) return NGX_DECLINED; /* judged before a redirect */

    ngx_pool_cleanup_t *mark = ngx_pool_cleanup_add(r->pool, 0);
    if (mark == NULL) return NGX_HTTP_INTERNAL_SERVER_ERROR;
    mark->data = (void *)(uintptr_t)WEIR_PASSED;
    mark->handler = ngx_http_weir_cleanup;

    int64_t now = ngx_http_weir_now();
#if defined(WEIR_TEST_CLOCK)
    now = ngx_http_weir_test_now(r, now);
#endif
    ngx_http_weir_limit_t *limits = lcf->limits->elts;
    ngx_uint_t n = lcf->limits->nelts;
    ngx_str_t key;

    if (n == 1) { /* the common case: one limit, one charge */
        ngx_http_weir_zone_t *zone = limits[0].zone;
        if (ngx_http_weir_key(r, zone, &key) != NGX_OK) {
            ngx_http_weir_count(zone, WEIR_NGX_ERRORS);
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (key.len == 0) { /* an empty key is not limited */
            ngx_http_weir_count(zone, WEIR_NGX_UNKEYED);
            return NGX_DECLINED;
        }
        int64_t wait = ngx_http_weir_charge(zone, &key, now);
        if (wait == 0) {
            ngx_http_weir_count(zone, limits[0].dry_run ? WEIR_NGX_DRY_RUN_ADMITTED : WEIR_NGX_ADMITTED);
            return NGX_DECLINED;
        }
        if (limits[0].dry_run) {
            ngx_http_weir_dry_refusal(r, lcf, mark, zone, &key);
            return NGX_DECLINED;
        }
        return ngx_http_weir_refuse(r, lcf, mark, zone, &key, wait);
    }

    ngx_str_t stack_keys[WEIR_NGX_STACK_LIMITS];
    ngx_str_t *keys = stack_keys;
    if (n > WEIR_NGX_STACK_LIMITS) {
        keys = ngx_palloc(r->pool, n * sizeof *keys);
        if (keys == NULL) return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    /* The enforced limits with a key, in order (at most
     * WEIR_CHARGE_MAX_ITEMS: the directive checks), and which limit each
     * item is. A key remembered as refused refuses before any charge. */
    weir_charge_item items[WEIR_CHARGE_MAX_ITEMS];
    ngx_uint_t which[WEIR_CHARGE_MAX_ITEMS];
    size_t m = 0;
    ngx_uint_t tables = 0; /* enforced table zones with a key */
    for (ngx_uint_t i = 0; i < n; i++) {
        if (ngx_http_weir_key(r, limits[i].zone, &keys[i]) != NGX_OK) {
            ngx_http_weir_count(limits[i].zone, WEIR_NGX_ERRORS);
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (keys[i].len == 0) ngx_http_weir_count(limits[i].zone, WEIR_NGX_UNKEYED);
        if (keys[i].len == 0 || limits[i].dry_run) continue;
        int64_t wait = ngx_http_weir_refused_wait(limits[i].zone, &keys[i], now);
        if (wait > 0) return ngx_http_weir_refuse(r, lcf, mark, limits[i].zone, &keys[i], wait);
        if (limits[i].zone->table) {
            /* A table is read now and charged after the others (below). */
            wait = ngx_http_weir_table_wait(limits[i].zone, &keys[i], now);
            if (wait > 0) return ngx_http_weir_refuse(r, lcf, mark, limits[i].zone, &keys[i], wait);
            tables++;
            continue;
        }
        if (m == WEIR_CHARGE_MAX_ITEMS) return NGX_HTTP_INTERNAL_SERVER_ERROR; /* the directive refuses more */
        ngx_http_weir_item(&items[m], limits[i].zone, &keys[i]);
        which[m++] = i;
    }
    weir_charge_result charged;
    weir_status st = WEIR_OK;
    if (m > 0) {
        st = weir_charge_all(items, m, now, &charged);
    } else {
        ngx_memzero(&charged, sizeof charged);
        charged.admitted = 1;
    }
    if (st != WEIR_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "weir_limit: %s", weir_status_str(st));
        for (size_t j = 0; j < m; j++) ngx_http_weir_count(limits[which[j]].zone, WEIR_NGX_ERRORS);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (!charged.admitted) {
        /* Refused by one zone; the others were not charged and count
         * nothing. */
        ngx_uint_t i = which[charged.index];
        int64_t wait = charged.wait < 1 ? 1 : charged.wait; /* refused now: whatever frees it is later */
        ngx_http_weir_refused_keep(limits[i].zone, &keys[i], now, wait);
        return ngx_http_weir_refuse(r, lcf, mark, limits[i].zone, &keys[i], wait);
    }
    /* The tables, in order, once the others are charged: each read would
     * pass above, so a table refuses here only if another worker spent the
     * key's last room since, or the table overflowed for a new key. The
     * zones charged before it then keep their charge: a refusal that costs
     * them, never an admit beyond any limit (docs/nginx.md). */
    for (ngx_uint_t i = 0; tables > 0 && i < n; i++) {
        if (keys[i].len == 0 || limits[i].dry_run || !limits[i].zone->table) continue;
        int64_t wait = ngx_http_weir_table_charge(limits[i].zone, &keys[i], now);
        if (wait > 0) return ngx_http_weir_refuse(r, lcf, mark, limits[i].zone, &keys[i], wait);
    }
    for (size_t j = 0; j < m; j++) ngx_http_weir_count(limits[which[j]].zone, WEIR_NGX_ADMITTED);
    for (ngx_uint_t i = 0; tables > 0 && i < n; i++) {
        if (keys[i].len != 0 && !limits[i].dry_run && limits[i].zone->table)
            ngx_http_weir_count(limits[i].zone, WEIR_NGX_ADMITTED);
    }
    for (ngx_uint_t i = 0; i < n; i++) {
        if (keys[i].len == 0 || !limits[i].dry_run) continue;
        if (ngx_http_weir_charge(limits[i].zone, &keys[i], now) > 0)
            ngx_http_weir_dry_refusal(r, lcf, mark, limits[i].zone, &keys[i]);
        else
            ngx_http_weir_count(limits[i].zone, WEIR_NGX_DRY_RUN_ADMITTED);
    }
    return NGX_DECLINED;
}

/* ---- $weir_limit_status ---- */

static ngx_int_t ngx_http_weir_status_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
                                               uintptr_t data) {
    (void)data;
    static ngx_str_t names[] = {ngx_null_string, ngx_string("PASSED"), ngx_string("REJECTED"),
                                ngx_string("REJECTED_DRY_RUN")};
    ngx_pool_cleanup_t *mark = ngx_http_weir_mark(r->main);
    uintptr_t status = mark ? (uintptr_t)mark->data & WEIR_NGX_MARK_STATUS : 0;
    if (status == 0 || status > WEIR_REJECTED_DRY_RUN) {
        v->not_found = 1;
        return NGX_OK;
    }
    v->len = names[status].len;
    v->data = names[status].data;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return NGX_OK;
}

/* ---- $weir_limit_zone ---- */

/* The zone that refused the request (or, in a dry run, the first that
 * would have); not found when none did. */
static ngx_int_t ngx_http_weir_zone_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
                                             uintptr_t data) {
    (void)data;
    ngx_http_weir_main_conf_t *mcf = ngx_http_get_module_main_conf(r, ngx_http_weir_limit_module);
    ngx_pool_cleanup_t *mark = ngx_http_weir_mark(r->main);
    uintptr_t z = mark ? (uintptr_t)mark->data >> WEIR_NGX_MARK_ZONE_SHIFT : 0;
    if (mcf == NULL || z == 0 || z > mcf->zones.nelts) {
        v->not_found = 1;
        return NGX_OK;
    }
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    v->len = zones[z - 1]->name.len;
    v->data = zones[z - 1]->name.data;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return NGX_OK;
}

static ngx_int_t ngx_http_weir_add_variables(ngx_conf_t *cf) {
    ngx_str_t name = ngx_string("weir_limit_status");
    ngx_http_variable_t *var = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_NOCACHEABLE);
    if (var == NULL) return NGX_ERROR;
    var->get_handler = ngx_http_weir_status_variable;
    ngx_str_t zone = ngx_string("weir_limit_zone");
    var = ngx_http_add_variable(cf, &zone, NGX_HTTP_VAR_NOCACHEABLE);
    if (var == NULL) return NGX_ERROR;
    var->get_handler = ngx_http_weir_zone_variable;
    return NGX_OK;
}

/* ---- the counts page: weir_limit_metrics ---- */

static const char *const ngx_http_weir_decision_names[WEIR_NGX_DECISIONS] = {
    "admitted", "refused", "dry_run_admitted", "dry_run_refused", "unkeyed", "errors"};

/* `zone`'s counts: the sum of every worker's slot. Reading changes
 * nothing. */
static void ngx_http_weir_read_counts(ngx_http_weir_zone_t *zone, uint64_t out[WEIR_NGX_DECISIONS]) {
    for (ngx_uint_t d = 0; d < WEIR_NGX_DECISIONS; d++) out[d] = 0;
    if (zone->counts == NULL) return;
    for (ngx_uint_t slot = 0; slot < WEIR_NGX_COUNT_SLOTS; slot++) {
        for (ngx_uint_t d = 0; d < WEIR_NGX_DECISIONS; d++) out[d] += zone->counts[slot].n[d];
    }
}

/* A zone's name inside a quoted string: '"' and '\\' escaped, a control
 * byte as \u00HH (JSON) or dropped to '?' (Prometheus, whose label values
 * escape only '"', '\\' and newlines). At most 6 bytes per byte. */
static u_char *ngx_http_weir_quoted(u_char *p, ngx_str_t *name, ngx_flag_t json) {
    static const u_char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < name->len; i++) {
        u_char c = name->data[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = c;
        } else if (c < 0x20 && json) {
            p = ngx_cpymem(p, "\\u00", 4);
            *p++ = hex[c >> 4];
            *p++ = hex[c & 0xf];
        } else if (c < 0x20) {
            if (c == '\n') {
                *p++ = '\\';
                *p++ = 'n';
            } else {
                *p++ = '?';
            }
        } else {
            *p++ = c;
        }
    }
    return p;
}

static u_char *ngx_http_weir_prometheus(u_char *p, ngx_http_weir_main_conf_t *mcf) {
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    p = ngx_cpymem(p,
                   "# HELP weir_limit_requests_total Requests a weir_limit zone judged, by decision.\n"
                   "# TYPE weir_limit_requests_total counter\n",
                   sizeof "# HELP weir_limit_requests_total Requests a weir_limit zone judged, by decision.\n"
                          "# TYPE weir_limit_requests_total counter\n" - 1);
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
        uint64_t n[WEIR_NGX_DECISIONS];
        ngx_http_weir_read_counts(zones[z], n);
        for (ngx_uint_t d = 0; d < WEIR_NGX_DECISIONS; d++) {
            p = ngx_sprintf(p, "weir_limit_requests_total{zone=\"");
            p = ngx_http_weir_quoted(p, &zones[z]->name, 0);
            p = ngx_sprintf(p, "\",decision=\"%s\"} %uL\n", ngx_http_weir_decision_names[d], n[d]);
        }
    }
    p = ngx_cpymem(p,
                   "# HELP weir_limit_zone_words The 8-byte words of a zone's bloom array.\n"
                   "# TYPE weir_limit_zone_words gauge\n",
                   sizeof "# HELP weir_limit_zone_words The 8-byte words of a zone's bloom array.\n"
                          "# TYPE weir_limit_zone_words gauge\n" - 1);
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
        if (zones[z]->header == NULL) continue;
        p = ngx_sprintf(p, "weir_limit_zone_words{zone=\"");
        p = ngx_http_weir_quoted(p, &zones[z]->name, 0);
        p = ngx_sprintf(p, "\"} %uL\n", (uint64_t)1 << zones[z]->header->size_log2);
    }
    ngx_flag_t tables = 0;
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) tables |= zones[z]->keyed != NULL;
    if (!tables) return p;
    weir_keyed_reading reading[1];
    p = ngx_cpymem(p,
                   "# HELP weir_limit_zone_slots The slots of a zone's keyed table, one key each.\n"
                   "# TYPE weir_limit_zone_slots gauge\n",
                   sizeof "# HELP weir_limit_zone_slots The slots of a zone's keyed table, one key each.\n"
                          "# TYPE weir_limit_zone_slots gauge\n" - 1);
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
        if (zones[z]->keyed == NULL || weir_keyed_read(zones[z]->keyed, reading) != WEIR_OK) continue;
        p = ngx_sprintf(p, "weir_limit_zone_slots{zone=\"");
        p = ngx_http_weir_quoted(p, &zones[z]->name, 0);
        p = ngx_sprintf(p, "\"} %uL\n", reading->slots);
    }
    p = ngx_cpymem(p,
                   "# HELP weir_limit_zone_overflows_total Requests of new keys a zone's keyed table had no room for.\n"
                   "# TYPE weir_limit_zone_overflows_total counter\n",
                   sizeof "# HELP weir_limit_zone_overflows_total Requests of new keys a zone's keyed table had no room for.\n"
                          "# TYPE weir_limit_zone_overflows_total counter\n" - 1);
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
        if (zones[z]->keyed == NULL || weir_keyed_read(zones[z]->keyed, reading) != WEIR_OK) continue;
        p = ngx_sprintf(p, "weir_limit_zone_overflows_total{zone=\"");
        p = ngx_http_weir_quoted(p, &zones[z]->name, 0);
        p = ngx_sprintf(p, "\"} %uL\n", reading->overflows);
    }
    return p;
}

static u_char *ngx_http_weir_json(u_char *p, ngx_http_weir_main_conf_t *mcf) {
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    p = ngx_cpymem(p, "{\"zones\":{", 10);
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
        uint64_t n[WEIR_NGX_DECISIONS];
        ngx_http_weir_read_counts(zones[z], n);
        if (z > 0) *p++ = ',';
        *p++ = '"';
        p = ngx_http_weir_quoted(p, &zones[z]->name, 1);
        p = ngx_cpymem(p, "\":{", 3);
        for (ngx_uint_t d = 0; d < WEIR_NGX_DECISIONS; d++)
            p = ngx_sprintf(p, "\"%s\":%uL,", ngx_http_weir_decision_names[d], n[d]);
        weir_keyed_reading reading;
        if (zones[z]->table) {
            if (zones[z]->keyed == NULL || weir_keyed_read(zones[z]->keyed, &reading) != WEIR_OK)
                ngx_memzero(&reading, sizeof reading);
            p = ngx_sprintf(p, "\"store\":\"table\",\"slots\":%uL,\"overflows\":%uL,", reading.slots,
                            reading.overflows);
        } else {
            p = ngx_sprintf(p, "\"words\":%uL,",
                            zones[z]->header ? (uint64_t)1 << zones[z]->header->size_log2 : (uint64_t)0);
        }
        p = ngx_sprintf(p, "\"burst\":%ui,\"kind\":\"%s\"}", zones[z]->burst,
                        zones[z]->kind == WEIR_NGX_WINDOW ? "window" : "smooth");
    }
    return ngx_cpymem(p, "}}\n", 3);
}

static ngx_int_t ngx_http_weir_metrics_handler(ngx_http_request_t *r) {
    if (!(r->method & (NGX_HTTP_GET | NGX_HTTP_HEAD))) return NGX_HTTP_NOT_ALLOWED;
    ngx_int_t rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) return rc;
    ngx_http_weir_loc_conf_t *lcf = ngx_http_get_module_loc_conf(r, ngx_http_weir_limit_module);
    ngx_http_weir_main_conf_t *mcf = ngx_http_get_module_main_conf(r, ngx_http_weir_limit_module);
    ngx_flag_t json = lcf->metrics == WEIR_NGX_METRICS_JSON;
    ngx_str_t format;
    if (ngx_http_arg(r, (u_char *)"format", 6, &format) == NGX_OK) {
        if (format.len == 4 && ngx_strncmp(format.data, "json", 4) == 0) {
            json = 1;
        } else if (format.len == 10 && ngx_strncmp(format.data, "prometheus", 10) == 0) {
            json = 0;
        } else {
            return NGX_HTTP_BAD_REQUEST;
        }
    }

    /* A bound on the page: each zone's lines at most 200 bytes beside its
     * name, which takes at most 6 bytes a byte quoted. */
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    size_t size = 1024;
    for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++)
        size += (WEIR_NGX_DECISIONS + 4) * (200 + 6 * zones[z]->name.len);
    ngx_buf_t *b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) return NGX_HTTP_INTERNAL_SERVER_ERROR;
    b->last = json ? ngx_http_weir_json(b->pos, mcf) : ngx_http_weir_prometheus(b->pos, mcf);
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;
    if (json) {
        ngx_str_set(&r->headers_out.content_type, "application/json");
    } else {
        ngx_str_set(&r->headers_out.content_type, "text/plain; version=0.0.4; charset=utf-8");
    }
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) return rc;
    ngx_chain_t out = {b, NULL};
    return ngx_http_output_filter(r, &out);
}

static char *ngx_http_weir_metrics_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf) {
    (void)cmd;
    ngx_http_weir_loc_conf_t *lcf = conf;
    ngx_str_t *value = cf->args->elts;
    if (lcf->metrics != 0) return "is duplicate";
    lcf->metrics = WEIR_NGX_METRICS_PROMETHEUS;
    if (cf->args->nelts == 2) {
        if (value[1].len == 4 && ngx_strncmp(value[1].data, "json", 4) == 0) {
            lcf->metrics = WEIR_NGX_METRICS_JSON;
        } else if (value[1].len != 10 || ngx_strncmp(value[1].data, "prometheus", 10) != 0) {
            return ngx_http_weir_bad(cf, "weir_limit_metrics", &value[1], "expected prometheus or json");
        }
    }
    ngx_http_core_loc_conf_t *clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_weir_metrics_handler;
    return NGX_CONF_OK;
}

/* ---- the zone ---- */

static void ngx_http_weir_attach(ngx_http_weir_zone_t *zone, weir_ngx_header_t *h) {
    zone->header = h;
    /* h->limit is the limit the words were laid with, as the region's
     * header holds it. */
    zone->relimited = ngx_memcmp(&h->limit, &zone->limit, sizeof h->limit) != 0;
    zone->region = (u_char *)h + WEIR_NGX_HEADER;
    zone->region_len = weir_bloom_footprint(h->size_log2);
    zone->counts = (weir_ngx_counts_t *)((u_char *)zone->region + zone->region_len);
}

/* What a reload may not change in a zone it keeps, or NULL: the words'
 * kind, the words per key, and a smooth zone's tick (a GCRA word is an
 * instant in ticks of 2^-shift ns; only rates above 7812500r/s have shift
 * above 0). The rate and burst may change: each worker brings its
 * config's limit to every charge. The size is checked apart (nginx gives a
 * resized zone fresh memory). `was`/`asks` get the two values. */
static const char *ngx_http_weir_changed(const weir_ngx_header_t *h, const ngx_http_weir_zone_t *zone,
                                         ngx_uint_t *was, ngx_uint_t *asks) {
    if (h->kind != zone->kind) {
        *was = h->kind;
        *asks = zone->kind;
        return "kind";
    }
    if (h->hashes != zone->hashes) {
        *was = h->hashes;
        *asks = zone->hashes;
        return "hashes";
    }
    if (zone->kind == WEIR_NGX_SMOOTH && h->limit.gcra.shift != zone->limit.gcra.shift) {
        *was = h->limit.gcra.shift;
        *asks = zone->limit.gcra.shift;
        return "tick";
    }
    return NULL;
}

static const char *ngx_http_weir_kind_name(ngx_uint_t kind) {
    return kind == WEIR_NGX_WINDOW ? "window" : kind == WEIR_NGX_SMOOTH ? "smooth" : "unknown";
}

/* A size change gives nginx a new zone under the old name: refused (true,
 * logged) rather than the old zone's state dropped silently. */
static ngx_flag_t ngx_http_weir_resized(ngx_shm_zone_t *shm_zone, ngx_http_weir_zone_t *zone) {
    ngx_list_part_t *part = &((ngx_cycle_t *)ngx_cycle)->shared_memory.part;
    ngx_shm_zone_t *old = part->elts;
    for (ngx_uint_t i = 0;; i++) {
        if (i >= part->nelts) {
            if (part->next == NULL) break;
            part = part->next;
            old = part->elts;
            i = 0;
        }
        if (old[i].tag == &ngx_http_weir_limit_module && old[i].shm.name.len == shm_zone->shm.name.len &&
            ngx_strncmp(old[i].shm.name.data, shm_zone->shm.name.data, shm_zone->shm.name.len) == 0 &&
            old[i].shm.size != shm_zone->shm.size && ngx_cycle->conf_ctx != NULL && old[i].shm.addr != NULL) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": a reload cannot change a zone's size (%uz to %uz); "
                          "rename the zone or restart nginx",
                          &zone->name, old[i].shm.size, shm_zone->shm.size);
            return 1;
        }
    }
    return 0;
}

static ngx_int_t ngx_http_weir_init_table_zone(ngx_shm_zone_t *shm_zone, void *data);

static ngx_int_t ngx_http_weir_init_zone(ngx_shm_zone_t *shm_zone, void *data) {
    ngx_http_weir_zone_t *zone = shm_zone->data;
    ngx_slab_pool_t *shpool = (ngx_slab_pool_t *)shm_zone->shm.addr;
    weir_ngx_header_t *h = shpool->data;

    if ((data != NULL || shm_zone->shm.exists) && h != NULL &&
        ((h->magic == WEIR_NGX_TABLE_MAGIC && !zone->table) || (h->magic == WEIR_NGX_MAGIC && zone->table))) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "weir_limit_zone \"%V\": a reload cannot change a zone's store (%s to %s); "
                      "rename the zone or restart nginx",
                      &zone->name, zone->table ? "bloom" : "table", zone->table ? "table" : "bloom");
        return NGX_ERROR;
    }
    if (zone->table) return ngx_http_weir_init_table_zone(shm_zone, data);

    if (data != NULL || shm_zone->shm.exists) {
        /* A reload (or a zone inherited at a binary upgrade): keep the
         * state and the SipHash key, if the shape is the same. */
        if (h != NULL && h->magic == WEIR_NGX_MAGIC_2) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": the zone was laid by an earlier version of the module "
                          "(without counts); restart nginx",
                          &zone->name);
            return NGX_ERROR;
        }
        if (h == NULL || h->magic != WEIR_NGX_MAGIC ||
            weir_bloom_check_in((u_char *)h + WEIR_NGX_HEADER, weir_bloom_footprint(h->size_log2)) != WEIR_OK) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": the zone handed over does not hold weir's words; "
                          "rename the zone or restart nginx",
                          &zone->name);
            return NGX_ERROR;
        }
        ngx_uint_t was = 0, asks = 0;
        const char *field = ngx_http_weir_changed(h, zone, &was, &asks);
        if (field != NULL) {
            if (field[0] == 'k') {
                ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                              "weir_limit_zone \"%V\": a reload cannot change a zone's kind (%s to %s); "
                              "rename the zone or restart nginx",
                              &zone->name, ngx_http_weir_kind_name(was), ngx_http_weir_kind_name(asks));
            } else if (field[0] == 'h') {
                ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                              "weir_limit_zone \"%V\": a reload cannot change a zone's hashes (%ui to %ui); "
                              "rename the zone or restart nginx",
                              &zone->name, was, asks);
            } else {
                ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                              "weir_limit_zone \"%V\": a reload cannot move a smooth zone's rate across "
                              "7812500r/s (its words' tick, 2^-%ui ns, would become 2^-%ui ns); "
                              "rename the zone or restart nginx",
                              &zone->name, was, asks);
            }
            return NGX_ERROR;
        }
        /* `data` is the running config's zone (NULL at a binary upgrade).
         * A changed rate or burst is kept in place: the words stay, this
         * config's workers judge them by the new limit. The header keeps
         * the limit the words were laid with (its tick is what every later
         * reload compares). */
        ngx_http_weir_zone_t *running = data;
        if (running != NULL && (running->burst != zone->burst || running->rate_number != zone->rate_number ||
                                running->rate_per_minute != zone->rate_per_minute)) {
            ngx_log_error(NGX_LOG_NOTICE, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": rate %ui%s to %ui%s, burst %ui to %ui; its words are kept",
                          &zone->name, running->rate_number, running->rate_per_minute ? "r/m" : "r/s",
                          zone->rate_number, zone->rate_per_minute ? "r/m" : "r/s", running->burst, zone->burst);
        }
        ngx_http_weir_attach(zone, h);
        return NGX_OK;
    }

    if (ngx_http_weir_resized(shm_zone, zone)) return NGX_ERROR;

    /* The most words the slab pool can give in one piece. */
    uint32_t log2 = WEIR_BLOOM_MAX_SIZE_LOG2;
#if defined(WEIR_TEST_CLOCK)
    if (zone->test_words_log2 != 0) log2 = zone->test_words_log2;
#endif
    h = NULL;
    while (h == NULL && log2 >= WEIR_BLOOM_MIN_SIZE_LOG2) {
        size_t need = WEIR_NGX_HEADER + weir_bloom_footprint(log2) + WEIR_NGX_COUNTS_BYTES;
        if (need < shm_zone->shm.size) h = ngx_slab_alloc(shpool, need);
        if (h == NULL) log2--;
    }
    if (h == NULL || log2 < WEIR_BLOOM_MIN_SIZE_LOG2 || ((uintptr_t)h + WEIR_NGX_HEADER) % 64 != 0) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0, "weir_limit_zone \"%V\": the zone is too small",
                      &zone->name);
        return NGX_ERROR;
    }
#if defined(WEIR_TEST_CLOCK)
    if (zone->test_words_log2 != 0 && log2 != zone->test_words_log2) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0, "weir_limit_zone \"%V\": test_words_log2 does not fit",
                      &zone->name);
        return NGX_ERROR;
    }
#endif
    zone->size_log2 = log2;
    ngx_memzero(h, sizeof *h);
    ngx_memzero((u_char *)h + WEIR_NGX_HEADER + weir_bloom_footprint(log2), WEIR_NGX_COUNTS_BYTES);
    uint64_t seed[2];
#if defined(WEIR_TEST_CLOCK)
    if (zone->test_seeded) {
        seed[0] = zone->test_seed[0];
        seed[1] = zone->test_seed[1];
    } else
#endif
    if (getrandom(seed, sizeof seed, 0) != (ssize_t)sizeof seed) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, ngx_errno, "weir_limit_zone \"%V\": getrandom() failed",
                      &zone->name);
        return NGX_ERROR;
    }
    void *region = (u_char *)h + WEIR_NGX_HEADER;
    size_t region_len = weir_bloom_footprint(log2);
    weir_status st = zone->kind == WEIR_NGX_SMOOTH
                         ? weir_bloom_init_gcra_in(region, region_len, zone->size_log2, (uint32_t)zone->hashes,
                                                   &zone->limit.gcra, seed[0], seed[1])
                         : weir_bloom_init_in(region, region_len, zone->size_log2, (uint32_t)zone->hashes,
                                              &zone->limit.rate, seed[0], seed[1]);
    if (st != WEIR_OK) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0, "weir_limit_zone \"%V\": %s", &zone->name,
                      weir_status_str(st));
        return NGX_ERROR;
    }
    h->limit = zone->limit;
    h->kind = (uint32_t)zone->kind;
    h->burst = (uint32_t)zone->burst;
    h->size_log2 = zone->size_log2;
    h->hashes = (uint32_t)zone->hashes;
    h->seed[0] = seed[0];
    h->seed[1] = seed[1];
    h->magic = WEIR_NGX_MAGIC;
    shpool->data = h;
    ngx_http_weir_attach(zone, h);
    return NGX_OK;
}

static const char *ngx_http_weir_overflow_name(uint32_t overflow) {
    return overflow == WEIR_KEYED_OVERFLOW_REFUSE  ? "refuse"
           : overflow == WEIR_KEYED_OVERFLOW_ADMIT ? "admit"
           : overflow == WEIR_KEYED_OVERFLOW_SHARED ? "shared"
                                                    : "unknown";
}

/* The table's place in a piece from the slab pool: its alignment, at
 * least the module header's 64 bytes. */
static size_t ngx_http_weir_table_offset(size_t align) {
    return align > WEIR_NGX_HEADER ? align : WEIR_NGX_HEADER;
}

/* Where the counts sit after a table of `bytes` at `offset`. */
static size_t ngx_http_weir_table_counts_at(size_t offset, size_t bytes) {
    return (offset + bytes + 63) & ~(size_t)63;
}

/* A zone holding a keyed table (store=table): laid fresh, or, at a reload,
 * attached, if the reload keeps its shape (kind, overflow policy, buckets,
 * and a smooth table's tick). A changed rate or burst is kept in place, but
 * not here: the table holds its limit in its region, read by every worker
 * attached, and this is a step of a cycle nginx may still abandon
 * (ngx_http_weir_init_module says when it is committed, and publishes it
 * then). */
static ngx_int_t ngx_http_weir_init_table_zone(ngx_shm_zone_t *shm_zone, void *data) {
    ngx_http_weir_zone_t *zone = shm_zone->data;
    ngx_slab_pool_t *shpool = (ngx_slab_pool_t *)shm_zone->shm.addr;
    weir_ngx_table_header_t *h = shpool->data;
    size_t bytes = 0, align = 64;
    weir_status st;

    if (data != NULL || shm_zone->shm.exists) {
        weir_keyed *keyed = NULL;
        if (h == NULL || h->magic != WEIR_NGX_TABLE_MAGIC ||
            weir_keyed_shared_footprint(h->buckets, &bytes, &align) != WEIR_OK || h->offset < WEIR_NGX_HEADER ||
            (st = weir_keyed_attach((u_char *)h + h->offset, bytes, &keyed)) != WEIR_OK) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": the zone handed over does not hold weir's table; "
                          "rename the zone or restart nginx",
                          &zone->name);
            return NGX_ERROR;
        }
        if (h->kind != zone->kind) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": a reload cannot change a zone's kind (%s to %s); "
                          "rename the zone or restart nginx",
                          &zone->name, ngx_http_weir_kind_name(h->kind), ngx_http_weir_kind_name(zone->kind));
            return NGX_ERROR;
        }
        if (h->overflow != zone->overflow) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": a reload cannot change a table's overflow policy (%s to %s); "
                          "rename the zone or restart nginx",
                          &zone->name, ngx_http_weir_overflow_name(h->overflow),
                          ngx_http_weir_overflow_name(zone->overflow));
            return NGX_ERROR;
        }
        if (zone->keys != 0 && h->buckets != zone->buckets) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": a reload cannot change a table's size (%uL to %uL buckets, "
                          "keys=%uL); rename the zone or restart nginx",
                          &zone->name, h->buckets, zone->buckets, zone->keys);
            return NGX_ERROR;
        }
        /* A GCRA word is an instant in ticks of 2^-shift ns: at another
         * tick the same bits would be another instant (the table would
         * refuse the limit at the commit: WEIR_ERR_KEYED_TICK_CHANGE). */
        if (zone->kind == WEIR_NGX_SMOOTH && h->limit.gcra.shift != zone->limit.gcra.shift) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": a reload cannot move a smooth zone's rate across "
                          "7812500r/s (its words' tick, 2^-%ui ns, would become 2^-%ui ns); "
                          "rename the zone or restart nginx",
                          &zone->name, (ngx_uint_t)h->limit.gcra.shift, (ngx_uint_t)zone->limit.gcra.shift);
            return NGX_ERROR;
        }
        /* h->limit is the limit published in the table's region (the one
         * laid, or the last committed reload's). Another is published at
         * the commit, not now. */
        if (ngx_memcmp(&h->limit, &zone->limit, sizeof h->limit) != 0) {
            ngx_http_weir_zone_t *running = data;
            zone->publish = 1;
            zone->was_burst = running ? running->burst : (ngx_uint_t)h->burst;
            zone->was_rate_number = running ? running->rate_number : 0; /* 0: not known */
            zone->was_rate_per_minute = running ? running->rate_per_minute : 0;
        }
        zone->keyed = keyed;
        zone->buckets = h->buckets;
        zone->table_header = h;
        zone->counts = (weir_ngx_counts_t *)((u_char *)h + ngx_http_weir_table_counts_at(h->offset, bytes));
        return NGX_OK;
    }

    if (ngx_http_weir_resized(shm_zone, zone)) return NGX_ERROR;

    /* keys=N's buckets, or the most that fit the slab pool's free pages
     * (a fresh pool's are one run: one piece). */
    size_t avail = (size_t)shpool->pfree << ngx_pagesize_shift;
    uint64_t buckets = zone->buckets;
    if (buckets == 0) {
        buckets = avail / 128;
        if (buckets > UINT32_MAX) buckets = UINT32_MAX;
    }
    h = NULL;
    size_t offset = 0;
    while (buckets >= 1) {
        if (weir_keyed_shared_footprint(buckets, &bytes, &align) == WEIR_OK) {
            offset = ngx_http_weir_table_offset(align);
            size_t need = ngx_http_weir_table_counts_at(offset, bytes) + WEIR_NGX_COUNTS_BYTES;
            if (need <= avail) {
                h = ngx_slab_alloc(shpool, need);
                break;
            }
        }
        if (zone->keys != 0) break;
        buckets -= buckets / 256 + 1;
    }
    if (h == NULL) {
        if (zone->keys != 0) {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                          "weir_limit_zone \"%V\": the zone is too small for keys=%uL (a table of %uL buckets, "
                          "%uz bytes, beside the pool's own pages)",
                          &zone->name, zone->keys, zone->buckets, bytes);
        } else {
            ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0, "weir_limit_zone \"%V\": the zone is too small",
                          &zone->name);
        }
        return NGX_ERROR;
    }
    if (((uintptr_t)h + offset) % align != 0) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "weir_limit_zone \"%V\": the zone's memory is not aligned for the table", &zone->name);
        return NGX_ERROR;
    }
    ngx_memzero(h, sizeof *h);
    size_t counts_at = ngx_http_weir_table_counts_at(offset, bytes);
    ngx_memzero((u_char *)h + counts_at, WEIR_NGX_COUNTS_BYTES);
    uint64_t seed[2];
#if defined(WEIR_TEST_CLOCK)
    if (zone->test_seeded) {
        seed[0] = zone->test_seed[0];
        seed[1] = zone->test_seed[1];
    } else
#endif
    if (getrandom(seed, sizeof seed, 0) != (ssize_t)sizeof seed) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, ngx_errno, "weir_limit_zone \"%V\": getrandom() failed",
                      &zone->name);
        return NGX_ERROR;
    }
    weir_keyed *keyed = NULL;
    void *region = (u_char *)h + offset;
    st = zone->kind == WEIR_NGX_SMOOTH
             ? weir_keyed_init_shared(region, bytes, buckets, &zone->limit.gcra, zone->overflow, seed[0], seed[1],
                                      &keyed)
             : weir_keyed_init_shared_rate(region, bytes, buckets, &zone->limit.rate, zone->overflow, seed[0],
                                           seed[1], &keyed);
    if (st != WEIR_OK) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0, "weir_limit_zone \"%V\": %s", &zone->name,
                      weir_status_str(st));
        return NGX_ERROR;
    }
    h->limit = zone->limit;
    h->kind = (uint32_t)zone->kind;
    h->overflow = zone->overflow;
    h->buckets = buckets;
    h->burst = (uint32_t)zone->burst;
    h->offset = (uint32_t)offset;
    h->magic = WEIR_NGX_TABLE_MAGIC;
    shpool->data = h;
    zone->keyed = keyed;
    zone->buckets = buckets;
    zone->table_header = h;
    zone->counts = (weir_ngx_counts_t *)((u_char *)h + counts_at);
    return NGX_OK;
}

/* At the commit of a cycle: nginx's init_module, which ngx_init_cycle
 * (nginx 1.22) calls in the master once nothing can abandon the cycle any
 * more. Until then a step after a zone's init may still fail it, and nginx
 * then keeps the running config: a later zone's init (the zones are
 * attached in the order they are declared; one whose change this module
 * refuses, or another module's, as limit_req's refusing a changed key), a
 * later new zone's allocation, or opening a new listening socket. A table
 * zone whose rate or burst the reload changed publishes
 * its new limit here, so an abandoned reload publishes nothing.
 *
 * The limit goes into the table's shared region, in one atomic
 * publication that every process attached reads at its next decision:
 * the new workers, and the old config's workers still finishing their
 * requests too (a bloom zone's words hold no limit, each worker bringing
 * its own config's: there the old workers keep the old one). The words
 * keep their state (docs/nginx.md, "A reload that changes a rate or
 * burst"). The header then holds the published limit, which the next
 * reload compares. Published in the master, in order: a new worker's
 * init_process could run after a later reload's commit and publish a
 * limit no longer current. init_module cannot fail a cycle it is asked
 * at (nginx exits): a refusal, which init_table_zone's checks leave no
 * cause for, is logged and the table keeps its limit. */
static ngx_int_t ngx_http_weir_init_module(ngx_cycle_t *cycle) {
    ngx_http_weir_main_conf_t *mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_weir_limit_module);
    if (mcf == NULL) return NGX_OK;
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    for (ngx_uint_t i = 0; i < mcf->zones.nelts; i++) {
        ngx_http_weir_zone_t *zone = zones[i];
        if (!zone->table || !zone->publish || zone->keyed == NULL || zone->table_header == NULL) continue;
        zone->publish = 0;
        weir_status st = zone->kind == WEIR_NGX_SMOOTH ? weir_keyed_reconfigure(zone->keyed, &zone->limit.gcra)
                                                       : weir_keyed_reconfigure_rate(zone->keyed, &zone->limit.rate);
        if (st != WEIR_OK) {
            ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                          "weir_limit_zone \"%V\": the table refused the new rate and burst (%s): it "
                          "keeps judging by the old ones (burst %ui); rename the zone or restart nginx",
                          &zone->name, weir_status_str(st), zone->was_burst);
            continue;
        }
        zone->table_header->limit = zone->limit;
        zone->table_header->burst = (uint32_t)zone->burst;
        if (zone->was_rate_number != 0) {
            ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                          "weir_limit_zone \"%V\": rate %ui%s to %ui%s, burst %ui to %ui; its words are kept, "
                          "judged by the new limit in every worker, old ones too",
                          &zone->name, zone->was_rate_number, zone->was_rate_per_minute ? "r/m" : "r/s",
                          zone->rate_number, zone->rate_per_minute ? "r/m" : "r/s", zone->was_burst,
                          zone->burst);
        } else {
            ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                          "weir_limit_zone \"%V\": rate %ui%s, burst %ui to %ui; its words are kept, "
                          "judged by the new limit in every worker, old ones too",
                          &zone->name, zone->rate_number, zone->rate_per_minute ? "r/m" : "r/s", zone->was_burst,
                          zone->burst);
        }
    }
    return NGX_OK;
}

/* ---- directives ---- */

static char *ngx_http_weir_bad(ngx_conf_t *cf, const char *directive, ngx_str_t *value, const char *why) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: invalid \"%V\": %s", directive, value, why);
    return NGX_CONF_ERROR;
}

static char *ngx_http_weir_zone_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf) {
    (void)cmd;
    (void)conf;
    ngx_http_weir_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_weir_limit_module);
    ngx_str_t *value = cf->args->elts;
    const char *d = "weir_limit_zone";

    ngx_http_weir_zone_t *zone = ngx_pcalloc(cf->pool, sizeof *zone);
    if (zone == NULL) return NGX_CONF_ERROR;
    zone->hashes = 3;
    zone->kind = WEIR_NGX_SMOOTH;
    zone->overflow = WEIR_KEYED_OVERFLOW_REFUSE;
    ngx_str_t *table_arg = NULL;    /* store=table, keys= or overflow=, for a message */
    ngx_str_t *hashes_arg = NULL;
    ngx_str_t *keys_arg = NULL;
    ngx_flag_t bloom_asked = 0;

    ngx_http_compile_complex_value_t ccv;
    ngx_memzero(&ccv, sizeof ccv);
    ccv.cf = cf;
    ccv.value = &value[1];
    ccv.complex_value = &zone->key;
    if (ngx_http_compile_complex_value(&ccv) != NGX_OK) return NGX_CONF_ERROR;
    /* A lone $variable is read by its index: no script run per request. */
    zone->key_index = NGX_ERROR;
    if (value[1].len > 1 && value[1].data[0] == '$') {
        ngx_str_t var = {value[1].len - 1, value[1].data + 1};
        ngx_uint_t j = 0;
        while (j < var.len) {
            u_char c = var.data[j];
            if (c != '_' && !(c >= '0' && c <= '9') && !((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) break;
            j++;
        }
        if (j == var.len) {
            zone->key_index = ngx_http_get_variable_index(cf, &var);
            if (zone->key_index == NGX_ERROR) return NGX_CONF_ERROR;
        }
#if nginx_version < 1023000
        /* A request header with no variable of its own in nginx (those
         * below have one, some joining repeated headers): read directly.
         * From 1.23 nginx joins repeated headers too, so there the
         * variable is read. */
        static const char *const own[] = {"host", "user_agent", "referer", "via", "x_forwarded_for", "cookie"};
        if (j == var.len && var.len > 5 && ngx_strncasecmp(var.data, (u_char *)"http_", 5) == 0) {
            ngx_str_t name = {var.len - 5, var.data + 5};
            ngx_uint_t known = 0;
            for (ngx_uint_t o = 0; o < sizeof own / sizeof own[0]; o++) {
                if (name.len == ngx_strlen(own[o]) && ngx_strncasecmp(name.data, (u_char *)own[o], name.len) == 0)
                    known = 1;
            }
            if (!known) {
                zone->key_header.data = ngx_pnalloc(cf->pool, name.len);
                if (zone->key_header.data == NULL) return NGX_CONF_ERROR;
                ngx_strlow(zone->key_header.data, name.data, name.len);
                zone->key_header.len = name.len;
                zone->key_header_dashed = ngx_pnalloc(cf->pool, name.len);
                if (zone->key_header_dashed == NULL) return NGX_CONF_ERROR;
                for (ngx_uint_t c = 0; c < name.len; c++)
                    zone->key_header_dashed[c] = zone->key_header.data[c] == '_' ? '-' : zone->key_header.data[c];
            }
        }
#endif
    }

    ngx_int_t burst = -1;
    ngx_str_t *burst_arg = NULL;
    for (ngx_uint_t i = 2; i < cf->args->nelts; i++) {
        ngx_str_t *v = &value[i];
        if (ngx_strncmp(v->data, "zone=", 5) == 0) {
            u_char *colon = ngx_strlchr(v->data + 5, v->data + v->len, ':');
            if (colon == NULL || colon == v->data + 5) return ngx_http_weir_bad(cf, d, v, "expected zone=NAME:SIZE");
            zone->name.data = v->data + 5;
            zone->name.len = colon - zone->name.data;
            ngx_str_t s = {(size_t)(v->data + v->len - (colon + 1)), colon + 1};
            ssize_t size = ngx_parse_size(&s);
            if (size == NGX_ERROR) return ngx_http_weir_bad(cf, d, v, "the size is not a number of bytes");
            if (size < (ssize_t)(8 * ngx_pagesize))
                return ngx_http_weir_bad(cf, d, v, "the zone is too small (at least 32k)");
            zone->size = (size_t)size;
        } else if (ngx_strncmp(v->data, "rate=", 5) == 0) {
            size_t len = v->len - 5;
            u_char *p = v->data + 5;
            ngx_uint_t per_minute;
            if (len > 3 && ngx_strncmp(p + len - 3, "r/s", 3) == 0) {
                per_minute = 0;
            } else if (len > 3 && ngx_strncmp(p + len - 3, "r/m", 3) == 0) {
                per_minute = 1;
            } else {
                return ngx_http_weir_bad(cf, d, v, "expected rate=Nr/s or rate=Nr/m");
            }
            ngx_int_t n = ngx_atoi(p, len - 3);
            if (n == NGX_ERROR) return ngx_http_weir_bad(cf, d, v, "the rate is not a whole number");
            if (n == 0) return ngx_http_weir_bad(cf, d, v, "the rate is zero");
            zone->rate_number = (ngx_uint_t)n;
            zone->rate_per_minute = per_minute;
            zone->rate_milli = per_minute ? (ngx_uint_t)n * 1000 / 60 : (ngx_uint_t)n * 1000;
            if (zone->rate_milli == 0) zone->rate_milli = 1;
        } else if (ngx_strncmp(v->data, "burst=", 6) == 0) {
            burst = ngx_atoi(v->data + 6, v->len - 6);
            if (burst == NGX_ERROR || burst < 1 || burst > WEIR_NGX_MAX_BURST)
                return ngx_http_weir_bad(cf, d, v, "the burst must be 1..1000000 (1..1023 for kind=window)");
            burst_arg = v;
        } else if (ngx_strncmp(v->data, "kind=", 5) == 0) {
            ngx_str_t kind = {v->len - 5, v->data + 5};
            if (kind.len == 6 && ngx_strncmp(kind.data, "window", 6) == 0) {
                zone->kind = WEIR_NGX_WINDOW;
            } else if (kind.len == 6 && ngx_strncmp(kind.data, "smooth", 6) == 0) {
                zone->kind = WEIR_NGX_SMOOTH;
            } else {
                return ngx_http_weir_bad(cf, d, v, "expected kind=smooth or kind=window");
            }
        } else if (ngx_strncmp(v->data, "hashes=", 7) == 0) {
            ngx_int_t k = ngx_atoi(v->data + 7, v->len - 7);
            if (k == NGX_ERROR || k < 1 || k > WEIR_BLOOM_MAX_HASHES)
                return ngx_http_weir_bad(cf, d, v, "hashes must be 1..8");
            zone->hashes = (ngx_uint_t)k;
            hashes_arg = v;
        } else if (ngx_strncmp(v->data, "store=", 6) == 0) {
            ngx_str_t store = {v->len - 6, v->data + 6};
            if (store.len == 5 && ngx_strncmp(store.data, "table", 5) == 0) {
                zone->table = 1;
                table_arg = v;
            } else if (store.len == 5 && ngx_strncmp(store.data, "bloom", 5) == 0) {
                bloom_asked = 1;
            } else {
                return ngx_http_weir_bad(cf, d, v, "expected store=bloom or store=table");
            }
        } else if (ngx_strncmp(v->data, "keys=", 5) == 0) {
            /* Decimal, with k (10^3) or m (10^6). */
            size_t len = v->len - 5;
            u_char *p = v->data + 5;
            uint64_t scale = 1;
            if (len > 1 && (p[len - 1] | 0x20) == 'k') scale = 1000, len--;
            else if (len > 1 && (p[len - 1] | 0x20) == 'm') scale = 1000000, len--;
            ngx_int_t n = ngx_atoi(p, len);
            if (n == NGX_ERROR || n < 1 || (uint64_t)n > UINT64_MAX / scale)
                return ngx_http_weir_bad(cf, d, v, "expected keys=N, N a whole number (k: 1000, m: 1000000)");
            zone->keys = (uint64_t)n * scale;
            keys_arg = v;
        } else if (ngx_strncmp(v->data, "overflow=", 9) == 0) {
            ngx_str_t o = {v->len - 9, v->data + 9};
            if (o.len == 6 && ngx_strncmp(o.data, "refuse", 6) == 0) {
                zone->overflow = WEIR_KEYED_OVERFLOW_REFUSE;
            } else if (o.len == 5 && ngx_strncmp(o.data, "admit", 5) == 0) {
                zone->overflow = WEIR_KEYED_OVERFLOW_ADMIT;
            } else if (o.len == 6 && ngx_strncmp(o.data, "shared", 6) == 0) {
                zone->overflow = WEIR_KEYED_OVERFLOW_SHARED;
            } else {
                return ngx_http_weir_bad(cf, d, v, "expected overflow=refuse, overflow=admit or overflow=shared");
            }
            if (table_arg == NULL) table_arg = v;
        } else {
#if defined(WEIR_TEST_CLOCK)
            ngx_int_t t = ngx_http_weir_test_parameter(zone, v);
            if (t == NGX_OK) continue;
            if (t == NGX_ERROR) return ngx_http_weir_bad(cf, d, v, "expected test_seed=K0:K1 or test_words_log2=N");
#endif
            return ngx_http_weir_bad(cf, d, v, "unknown parameter");
        }
    }
    if (zone->name.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: \"zone=NAME:SIZE\" is required", d);
        return NGX_CONF_ERROR;
    }
    if (zone->rate_number == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: \"rate=\" is required", d);
        return NGX_CONF_ERROR;
    }
    if (burst < 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: \"burst=\" is required", d);
        return NGX_CONF_ERROR;
    }
    if (!zone->table && (keys_arg != NULL || table_arg != NULL))
        return ngx_http_weir_bad(cf, d, keys_arg ? keys_arg : table_arg, "keys= and overflow= are store=table's");
    if (zone->table && bloom_asked)
        return ngx_http_weir_bad(cf, d, table_arg, "store= is given twice");
    if (zone->table && hashes_arg != NULL)
        return ngx_http_weir_bad(cf, d, hashes_arg, "a table (store=table) gives each key one word: no hashes");
    if (zone->table && !weir_keyed_lock_free())
        return ngx_http_weir_bad(cf, d, table_arg,
                                 "store=table needs a 16-byte compare-and-swap that is the CPU's own (x86_64 "
                                 "with cmpxchg16b, aarch64) to share a table between workers, and this machine "
                                 "has none; use the bloom (no store=)");
    if (zone->table && zone->keys != 0) {
        uint64_t buckets;
        size_t bytes, align;
        weir_status kst = weir_keyed_buckets_for(zone->keys, WEIR_NGX_TABLE_CHANCE, &buckets);
        if (kst == WEIR_OK) kst = weir_keyed_shared_footprint(buckets, &bytes, &align);
        if (kst != WEIR_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: invalid \"%V\": %s", d, keys_arg, weir_status_str(kst));
            return NGX_CONF_ERROR;
        }
        /* The table, its header and counts, and the slab pool's own pages
         * (its page records, 1/128 of the zone, and a few pages). */
        size_t need = ngx_http_weir_table_counts_at(ngx_http_weir_table_offset(align), bytes) +
                      WEIR_NGX_COUNTS_BYTES;
        size_t with_pool = need + need / 128 + 8 * ngx_pagesize;
        if (zone->size < with_pool) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "%s: zone \"%V\" is too small for \"%V\": its table is %uL buckets, %uz bytes; "
                               "give the zone at least %uzk",
                               d, &zone->name, keys_arg, buckets, bytes, (with_pool + 1023) / 1024);
            return NGX_CONF_ERROR;
        }
        zone->buckets = buckets;
    }
    zone->burst = (ngx_uint_t)burst;
    double per_s = zone->rate_per_minute ? (double)zone->rate_number / 60.0 : (double)zone->rate_number;
    if (zone->kind == WEIR_NGX_WINDOW && burst > WEIR_RATE_MAX_BURST)
        return ngx_http_weir_bad(cf, d, burst_arg, "kind=window takes a burst of 1..1023");
    weir_status st = zone->kind == WEIR_NGX_SMOOTH ? weir_gcra_limit_new(per_s, burst, &zone->limit.gcra)
                                                   : weir_rate_limit_new(per_s, burst, &zone->limit.rate);
    if (st != WEIR_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: invalid \"%V\" with this rate: %s", d, burst_arg,
                           weir_status_str(st));
        return NGX_CONF_ERROR;
    }

    /* The refusal headers' constant parts, made once: the policy, with a
     * window of burst / rate seconds rounded up, and the state up to t=. */
    uint64_t seconds = zone->burst * (zone->rate_per_minute ? 60 : 1);
    uint64_t window = (seconds + zone->rate_number - 1) / zone->rate_number;
    if (window < 1) window = 1;
    zone->policy.data = ngx_pnalloc(cf->pool, zone->name.len + 64);
    if (zone->policy.data == NULL) return NGX_CONF_ERROR;
    zone->policy.len = ngx_sprintf(zone->policy.data, "\"%V\";q=%ui;w=%uL", &zone->name, zone->burst, window) -
                       zone->policy.data;
    zone->state_prefix.data = ngx_pnalloc(cf->pool, zone->name.len + 16);
    if (zone->state_prefix.data == NULL) return NGX_CONF_ERROR;
    zone->state_prefix.len = ngx_sprintf(zone->state_prefix.data, "\"%V\";r=0;t=", &zone->name) -
                             zone->state_prefix.data;
    zone->refused = ngx_pcalloc(cf->pool, WEIR_NGX_REFUSED_SLOTS * sizeof *zone->refused);
    if (zone->refused == NULL) return NGX_CONF_ERROR;

    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    for (ngx_uint_t i = 0; i < mcf->zones.nelts; i++) {
        if (zones[i]->name.len == zone->name.len &&
            ngx_strncmp(zones[i]->name.data, zone->name.data, zone->name.len) == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: zone \"%V\" is declared twice", d, &zone->name);
            return NGX_CONF_ERROR;
        }
    }

    zone->shm_zone = ngx_shared_memory_add(cf, &zone->name, zone->size, &ngx_http_weir_limit_module);
    if (zone->shm_zone == NULL) return NGX_CONF_ERROR;
    if (zone->shm_zone->data) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: zone \"%V\" is already in use", d, &zone->name);
        return NGX_CONF_ERROR;
    }
    zone->shm_zone->init = ngx_http_weir_init_zone;
    zone->shm_zone->data = zone;
    zone->index = mcf->zones.nelts;
    zone->key_binary = value[1].len == sizeof "$binary_remote_addr" - 1 &&
                       ngx_strncmp(value[1].data, "$binary_remote_addr", value[1].len) == 0;

    ngx_http_weir_zone_t **slot = ngx_array_push(&mcf->zones);
    if (slot == NULL) return NGX_CONF_ERROR;
    *slot = zone;
    return NGX_CONF_OK;
}

static char *ngx_http_weir_limit_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf) {
    (void)cmd;
    ngx_http_weir_loc_conf_t *lcf = conf;
    ngx_http_weir_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_weir_limit_module);
    ngx_str_t *value = cf->args->elts;
    const char *d = "weir_limit";

    if (value[1].len <= 5 || ngx_strncmp(value[1].data, "zone=", 5) != 0)
        return ngx_http_weir_bad(cf, d, &value[1], "expected zone=NAME");
    ngx_flag_t dry_run = 0;
    if (cf->args->nelts == 3) {
        if (value[2].len != 7 || ngx_strncmp(value[2].data, "dry_run", 7) != 0)
            return ngx_http_weir_bad(cf, d, &value[2], "expected dry_run");
        dry_run = 1;
    }
    if (lcf->limits == NULL) {
        lcf->limits = ngx_array_create(cf->pool, 2, sizeof(ngx_http_weir_limit_t));
        if (lcf->limits == NULL) return NGX_CONF_ERROR;
    }
    if (!dry_run) {
        /* Enforced limits are charged together, in one weir_charge_all. */
        ngx_http_weir_limit_t *have = lcf->limits->elts;
        ngx_uint_t enforced = 0;
        for (ngx_uint_t i = 0; i < lcf->limits->nelts; i++) enforced += !have[i].dry_run;
        if (enforced == WEIR_CHARGE_MAX_ITEMS)
            return ngx_http_weir_bad(cf, d, &value[1], "at most 16 enforced weir_limit in one place (WEIR_CHARGE_MAX_ITEMS)");
    }
    ngx_http_weir_limit_t *limit = ngx_array_push(lcf->limits);
    if (limit == NULL) return NGX_CONF_ERROR;
    limit->zone = NULL;
    limit->dry_run = dry_run;

    /* The zone may be declared later in the file: resolved at
     * postconfiguration. */
    ngx_http_weir_pending_t *pending = ngx_array_push(&mcf->pending);
    if (pending == NULL) return NGX_CONF_ERROR;
    pending->name.data = value[1].data + 5;
    pending->name.len = value[1].len - 5;
    pending->limit = limit;
    pending->file = cf->conf_file->file.name;
    pending->line = cf->conf_file->line;
    return NGX_CONF_OK;
}

static void *ngx_http_weir_create_main_conf(ngx_conf_t *cf) {
    ngx_http_weir_main_conf_t *mcf = ngx_pcalloc(cf->pool, sizeof *mcf);
    if (mcf == NULL) return NULL;
    if (ngx_array_init(&mcf->zones, cf->pool, 2, sizeof(ngx_http_weir_zone_t *)) != NGX_OK) return NULL;
    if (ngx_array_init(&mcf->pending, cf->pool, 4, sizeof(ngx_http_weir_pending_t)) != NGX_OK) return NULL;
    return mcf;
}

static void *ngx_http_weir_create_loc_conf(ngx_conf_t *cf) {
    ngx_http_weir_loc_conf_t *lcf = ngx_pcalloc(cf->pool, sizeof *lcf);
    if (lcf == NULL) return NULL;
    lcf->limits = NULL;
    lcf->status_code = NGX_CONF_UNSET_UINT;
    lcf->log_level = NGX_CONF_UNSET_UINT;
    return lcf;
}

static char *ngx_http_weir_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child) {
    (void)cf;
    ngx_http_weir_loc_conf_t *prev = parent;
    ngx_http_weir_loc_conf_t *conf = child;
    /* A level with no weir_limit inherits the outer level's, all of them. */
    if (conf->limits == NULL) conf->limits = prev->limits;
    ngx_conf_merge_uint_value(conf->status_code, prev->status_code, NGX_HTTP_TOO_MANY_REQUESTS);
    ngx_conf_merge_uint_value(conf->log_level, prev->log_level, NGX_LOG_ERR);
    return NGX_CONF_OK;
}

static ngx_int_t ngx_http_weir_init(ngx_conf_t *cf) {
    ngx_http_weir_main_conf_t *mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_weir_limit_module);
    ngx_http_weir_pending_t *pending = mcf->pending.elts;
    ngx_http_weir_zone_t **zones = mcf->zones.elts;
    for (ngx_uint_t i = 0; i < mcf->pending.nelts; i++) {
        for (ngx_uint_t z = 0; z < mcf->zones.nelts; z++) {
            if (zones[z]->name.len == pending[i].name.len &&
                ngx_strncmp(zones[z]->name.data, pending[i].name.data, pending[i].name.len) == 0) {
                pending[i].limit->zone = zones[z];
            }
        }
        if (pending[i].limit->zone == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "weir_limit: unknown zone \"zone=%V\" in %V:%ui",
                          &pending[i].name, &pending[i].file, pending[i].line);
            return NGX_ERROR;
        }
    }
    if (mcf->pending.nelts == 0) return NGX_OK;

    ngx_http_core_main_conf_t *cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    ngx_http_handler_pt *h = ngx_array_push(&cmcf->phases[NGX_HTTP_PREACCESS_PHASE].handlers);
    if (h == NULL) return NGX_ERROR;
    *h = ngx_http_weir_handler;
    return NGX_OK;
}
