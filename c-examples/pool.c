/* A pool of real TCP connections, kept by weir_pool.
 *
 * The example starts a small echo server on 127.0.0.1 in a thread, then
 * plays a few minutes of a client's life on its own clock (`now`, in
 * nanoseconds: no sleeping): a connection made on MAKE and reused on READY,
 * one that the server hangs up on and is dropped, an idle one that goes
 * stale and is closed, eviction on a timer tick armed with next_expiry, and
 * a shutdown that closes everything. The pool only keeps the books; every
 * connect and close below is the example's own.
 *
 * Run it under valgrind --track-fds=yes: no descriptor or byte is leaked. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "weir.h"

#define SEC INT64_C(1000000000)

/* ---- the echo server: one thread polling a listener, a stop pipe and
 * its clients. A line "bye" makes it hang up on that client. ---- */

enum { MAX_CLIENTS = 8 };

struct server {
    int listener;
    int stop[2];
    uint16_t port;
    pthread_t thread;
};

static void *serve(void *arg) {
    struct server *server = arg;
    struct pollfd fds[2 + MAX_CLIENTS];
    nfds_t count = 2;
    fds[0] = (struct pollfd){.fd = server->stop[0], .events = POLLIN};
    fds[1] = (struct pollfd){.fd = server->listener, .events = POLLIN};
    for (;;) {
        if (poll(fds, count, -1) < 0) break;
        if (fds[0].revents) break;
        if ((fds[1].revents & POLLIN) && count < 2 + MAX_CLIENTS) {
            int client = accept(server->listener, NULL, NULL);
            if (client >= 0) fds[count++] = (struct pollfd){.fd = client, .events = POLLIN};
        }
        for (nfds_t i = 2; i < count; i++) {
            if (!fds[i].revents) continue;
            char buffer[256];
            ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
            if (got > 0 && !(got >= 3 && memcmp(buffer, "bye", 3) == 0)) {
                if (send(fds[i].fd, buffer, (size_t)got, MSG_NOSIGNAL) == got) continue;
            }
            close(fds[i].fd); /* the client left, or asked to be hung up on */
            fds[i--] = fds[--count];
        }
    }
    for (nfds_t i = 2; i < count; i++) close(fds[i].fd);
    return NULL;
}

static int server_start(struct server *server) {
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    server->listener = socket(AF_INET, SOCK_STREAM, 0);
    if (server->listener < 0) return -1;
    if (bind(server->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(server->listener, MAX_CLIENTS) != 0 ||
        getsockname(server->listener, (struct sockaddr *)&address, &length) != 0 ||
        pipe(server->stop) != 0) {
        close(server->listener);
        return -1;
    }
    server->port = ntohs(address.sin_port);
    if (pthread_create(&server->thread, NULL, serve, server) != 0) {
        close(server->stop[0]);
        close(server->stop[1]);
        close(server->listener);
        return -1;
    }
    return 0;
}

static void server_stop(struct server *server) {
    if (write(server->stop[1], "x", 1) != 1) perror("stop the server");
    pthread_join(server->thread, NULL);
    close(server->stop[0]);
    close(server->stop[1]);
    close(server->listener);
}

/* ---- the client's side: connect, and use a connection ---- */

static int dial(uint16_t port) {
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval patience = {.tv_sec = 2}; /* never hang the example */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends `line` and waits for it to come back: whether the connection works. */
static int echo(int fd, const char *line) {
    size_t length = strlen(line);
    char reply[256];
    if (send(fd, line, length, MSG_NOSIGNAL) != (ssize_t)length) return 0;
    size_t got = 0;
    while (got < length) {
        ssize_t n = read(fd, reply + got, sizeof reply - got);
        if (n <= 0) return 0; /* hung up (or timed out) */
        got += (size_t)n;
    }
    return memcmp(reply, line, length) == 0;
}

/* ---- the pool in use ---- */

static weir_pool *pool;
static uint16_t port;
static int64_t now;

static void say(const char *what) {
    printf("t=%6.1fs  %-44s live %lld idle %lld busy %lld\n", (double)now / 1e9, what,
           (long long)weir_pool_live(pool), (long long)weir_pool_idle(pool),
           (long long)weir_pool_busy(pool));
}

/* Gets a working connection the way a server would: stale ones are closed
 * and the pool asked again; MAKE means connect. Returns -1 on WAIT. */
static int get(void) {
    char line[96];
    for (;;) {
        weir_pool_taken taken = weir_pool_take(pool, now);
        int fd = (int)taken.item;
        switch (taken.kind) {
        case WEIR_POOL_TAKEN_READY:
            snprintf(line, sizeof line, "take: READY, reuse fd %d", fd);
            say(line);
            return fd;
        case WEIR_POOL_TAKEN_STALE:
            close(fd);
            snprintf(line, sizeof line, "take: STALE fd %d, closed it; take again", fd);
            say(line);
            continue;
        case WEIR_POOL_TAKEN_MAKE:
            fd = dial(port);
            if (fd < 0) {
                weir_pool_unmade(pool); /* the room is free again */
                say("take: MAKE, but connect failed: unmade");
                return -1;
            }
            if (weir_pool_made(pool, (uintptr_t)fd, now) != WEIR_OK) {
                close(fd);
                return -1;
            }
            snprintf(line, sizeof line, "take: MAKE, connected fd %d", fd);
            say(line);
            return fd;
        default:
            say("take: WAIT (a real server would queue)");
            return -1;
        }
    }
}

/* Hands a connection back; closes it if the pool does not keep it. */
static void put(int fd) {
    bool kept = false;
    char line[96];
    if (weir_pool_give(pool, (uintptr_t)fd, now, &kept) != WEIR_OK) return;
    if (!kept) close(fd);
    snprintf(line, sizeof line, "give fd %d: %s", fd, kept ? "kept idle" : "not kept, closed it");
    say(line);
}

/* Uses a connection for one request; a broken one is dropped and closed. */
static void use(int fd, const char *request) {
    char line[96];
    if (echo(fd, request)) {
        put(fd);
        return;
    }
    weir_pool_drop(pool, (uintptr_t)fd);
    close(fd);
    snprintf(line, sizeof line, "fd %d broke: dropped and closed", fd);
    say(line);
}

/* The eviction timer: armed with next_expiry, it fires, closes what evict
 * hands back, and re-arms. */
static void timer_ticks(int64_t until) {
    char line[96];
    for (;;) {
        int64_t wait = weir_pool_next_expiry(pool, now);
        if (wait == INT64_MAX || now + wait > until) return;
        now += wait;
        uintptr_t due[4];
        /* evict returns how many it wrote (and removed), at most 4. If it
         * filled the buffer more may be due: then the next round's wait is
         * 0 and the loop evicts again at once. */
        size_t written = weir_pool_evict(pool, now, due, 4);
        for (size_t i = 0; i < written; i++) close((int)due[i]);
        snprintf(line, sizeof line, "timer, %.0fs later: evicted %zu, closed", (double)wait / 1e9,
                 written);
        say(line);
    }
}

int main(void) {
    struct server server;
    if (server_start(&server) != 0) {
        perror("echo server");
        return 1;
    }
    port = server.port;
    printf("echo server on 127.0.0.1:%u\n", (unsigned)port);

    /* Two connections at most, both may idle, 60 s idle or 10 min of life. */
    weir_pool_policy limits = {.size = 2, .idle = 2, .keep_ns = 60 * SEC, .life_ns = 600 * SEC};
    if (weir_pool_new(&limits, &pool) != WEIR_OK) return 1;

    puts("-- MAKE, then READY: the same connection serves the next request");
    int a = get();
    use(a, "hello\n");
    now = 1 * SEC;
    a = get();
    use(a, "again\n");

    puts("-- two at once: the second is made; a third must wait");
    now = 2 * SEC;
    a = get();
    int b = get();
    if (get() != -1) return 1;
    use(a, "one\n");
    use(b, "two\n"); /* b is now the newest idle */

    puts("-- the server hangs up on the next one: it is dropped");
    now = 3 * SEC;
    b = get();
    use(b, "bye\n");

    puts("-- the other sat idle past keep (60 s): handed back STALE");
    now = 70 * SEC;
    a = get();
    use(a, "fresh\n");

    puts("-- eviction on a timer tick, armed with next_expiry");
    now = 80 * SEC;
    a = get();
    b = get();
    use(a, "short\n");
    now = 100 * SEC;
    use(b, "long\n");
    timer_ticks(200 * SEC);

    puts("-- shutdown: close hands back the idle; the lent one comes back unkept");
    now = 200 * SEC;
    a = get();
    b = get();
    use(a, "last\n");
    uintptr_t idle[2];
    do { /* what does not fit in the buffer waits for the next call */
        size_t count = weir_pool_close(pool, idle, 2);
        for (size_t i = 0; i < count; i++) close((int)idle[i]);
    } while (weir_pool_idle(pool) > 0);
    say("close: closed the idle ones");
    use(b, "late\n");

    weir_pool_stats c;
    weir_pool_read_stats(pool, &c);
    printf("made %llu, reused %llu, stale %llu, evicted %llu, dropped %llu, closed %llu\n",
           (unsigned long long)c.made, (unsigned long long)c.reused,
           (unsigned long long)c.stale, (unsigned long long)(c.evicted_idle + c.evicted_age),
           (unsigned long long)c.dropped, (unsigned long long)c.closed);
    int all_closed = weir_pool_live(pool) == 0 &&
                     c.made == c.stale + c.evicted_idle + c.evicted_age + c.dropped +
                                   c.refused + c.closed;
    weir_pool_free(pool);
    server_stop(&server);
    puts(all_closed ? "every connection made was closed" : "a connection was lost!");
    return all_closed ? 0 : 1;
}
