/*
 * cell-http-c: an HTTP/1.1 server, single-threaded epoll (level-triggered),
 * non-blocking sockets. A cell benchmark target.
 *
 * Usage: cell-http-c PORT [--leak BYTES]
 *
 * This file is the event loop and the connections' buffers; what a request
 * means (parsing, routing, the JSON reader and writer, the five workloads of
 * bench/http/README.md and their 400/404/405/413/415/501 answers) is in
 * http.h, which c-models/main.c shares:
 *   GET  /                   200 text/plain "hello, world\n"
 *   GET  /json               200 {"message":"Hello, World!"}, serialised per request
 *   GET  /users/ID           200 {"id":ID}, ID an unsigned 64-bit integer (else 404)
 *   POST /users              the body {"name":s,"age":u64,"adult":bool} parsed
 *                            and written back (else 400)
 *   POST /minimal/users/ID   both: 200 {"id":ID,"name":s,"age":u64,"adult":bool}
 * Unknown paths are 404, a wrong method on a known path is 405 with Allow.
 * Binds 127.0.0.1 only, keeps connections alive (HTTP/1.1 default, HTTP/1.0
 * on request), handles pipelined and split requests, logs nothing per
 * request, exits 0 on SIGTERM.
 *
 * --leak BYTES: for every request served, malloc BYTES, write every page of
 * it and never free it. A deliberate leak, so a soak test can prove that it
 * notices one. Without it, memory stays flat.
 *
 * Build: cc -O2 -o cell-http-c main.c   (http.h is found next to this file)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_EVENTS 256

/* epoll data.u64 tags for the two non-connection fds */
#define TAG_LISTEN UINT64_MAX
#define TAG_SIGNAL (UINT64_MAX - 1)

/* ---- the deliberate leak ------------------------------------------------ */

static size_t leak_bytes;
static void *volatile leak_head; /* chain of leaked blocks: keeps them reachable-looking to nobody */

static void leak_once(void)
{
    if (!leak_bytes)
        return;
    char *p = malloc(leak_bytes);
    if (!p) {
        static const char msg[] = "cell-http-c: --leak: out of memory\n";
        if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
            /* nothing more to say */
        }
        exit(1);
    }
    memset(p, 0xA5, leak_bytes); /* touches every page: really resident */
    if (leak_bytes >= sizeof(void *)) {
        void *prev = leak_head;
        memcpy(p, &prev, sizeof prev);
    }
    leak_head = p;
}

/* http.h calls this once for every request it serves. */
#define HTTP_ON_REQUEST() leak_once()
#include "http.h"

/* ---- connections -------------------------------------------------------- */

struct conn {
    int fd;
    uint32_t events;    /* interest currently registered with epoll */
    int read_closed;    /* peer sent FIN */
    struct http_conn h; /* input, output and framing state (http.h) */
};

static int epfd = -1;
static struct conn **conns; /* indexed by fd */
static size_t conns_cap;
static int spare_fd = -1;   /* reserved so EMFILE can be shed, see do_accept */

static void conn_close(struct conn *c)
{
    char sink[4096];
    /* Drain what the peer already sent, so close() sends FIN rather than an
     * RST that could destroy the response still in flight. Bounded. */
    for (int i = 0; i < 16 && recv(c->fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
        ;
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    conns[c->fd] = NULL;
    http_free(&c->h);
    free(c);
}

/* Write out what we can. Returns -1 on a fatal socket error. */
static int flush_output(struct conn *c)
{
    struct http_conn *h = &c->h;

    while (http_pending(h)) {
        ssize_t n = send(c->fd, h->out.p + h->out_off, http_pending(h), MSG_NOSIGNAL);
        if (n > 0) {
            h->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return -1;
        }
    }
    h->out.len = h->out_off = 0;
    return 0;
}

static int set_interest(struct conn *c, uint32_t want)
{
    if (want == c->events)
        return 0;
    struct epoll_event ev = { .events = want, .data.u64 = (uint64_t)c->fd };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        return -1;
    c->events = want;
    return 0;
}

static void on_conn_event(struct conn *c, uint32_t events)
{
    struct http_conn *h = &c->h;

    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }

    if ((events & (EPOLLIN | EPOLLHUP)) && !c->read_closed && !h->closing) {
        for (;;) {
            if (h->in_len == h->in_cap) {
                /* Full: either a backlog we paused on, or an oversized head
                 * (http_process answers 431 for that). */
                if (http_process(h) < 0) {
                    conn_close(c);
                    return;
                }
                if (h->in_len == h->in_cap || h->closing)
                    break;
            }
            size_t space = h->in_cap - h->in_len;
            ssize_t n = recv(c->fd, h->in + h->in_len, space, 0);
            if (n > 0) {
                h->in_len += (size_t)n;
                if (http_process(h) < 0) {
                    conn_close(c);
                    return;
                }
                if (h->closing || http_pending(h) >= OUT_PAUSE)
                    break;
                if ((size_t)n < space)
                    break; /* likely drained; level-triggered epoll reports more */
            } else if (n == 0) {
                c->read_closed = 1;
                break;
            } else if (errno == EINTR) {
                continue;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            } else {
                conn_close(c);
                return;
            }
        }
    }

    /* Flush; each time the backlog empties, serve input that was held back. */
    for (;;) {
        if (flush_output(c) < 0) {
            conn_close(c);
            return;
        }
        if (http_pending(h) || h->closing || h->in_len == 0)
            break;
        size_t before = h->out.len;
        if (http_process(h) < 0) {
            conn_close(c);
            return;
        }
        if (h->out.len == before && !h->closing)
            break; /* only a partial request left: wait for more input */
    }

    if (!http_pending(h) && (h->closing || c->read_closed)) {
        conn_close(c);
        return;
    }

    uint32_t want = 0;
    if (http_pending(h))
        want |= EPOLLOUT;
    if (!c->read_closed && !h->closing && http_pending(h) < OUT_PAUSE)
        want |= EPOLLIN;
    if (set_interest(c, want) < 0)
        conn_close(c);
}

static int conns_reserve(int fd)
{
    if ((size_t)fd < conns_cap)
        return 0;
    size_t cap = conns_cap ? conns_cap : 1024;
    while (cap <= (size_t)fd)
        cap *= 2;
    struct conn **p = realloc(conns, cap * sizeof *p);
    if (!p)
        return -1;
    memset(p + conns_cap, 0, (cap - conns_cap) * sizeof *p);
    conns = p;
    conns_cap = cap;
    return 0;
}

static void do_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE) && spare_fd >= 0) {
                /* Out of fds: free the spare, accept and drop one client so
                 * the level-triggered listener does not spin, re-reserve. */
                close(spare_fd);
                fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd >= 0)
                    close(fd);
                spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                continue;
            }
            return; /* EAGAIN, or something transient */
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

        struct conn *c = NULL;
        if (conns_reserve(fd) < 0 || !(c = calloc(1, sizeof *c)) || http_init(&c->h, 0) < 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->events = EPOLLIN;
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)fd };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            http_free(&c->h);
            free(c);
            continue;
        }
        conns[fd] = c;
    }
}

/* ---- setup -------------------------------------------------------------- */

static _Noreturn void usage(void)
{
    fputs("usage: cell-http-c PORT [--leak BYTES]\n", stderr);
    exit(2);
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    unsigned long long port = 0, v = 0;
    int have_port = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--leak") == 0) {
            if (i + 1 >= argc || parse_num(argv[++i], SIZE_MAX / 2, &v) < 0) {
                fputs("cell-http-c: --leak needs a byte count\n", stderr);
                usage();
            }
            leak_bytes = (size_t)v;
        } else if (!have_port && argv[i][0] != '-') {
            if (parse_num(argv[i], 65535, &port) < 0 || port == 0) {
                fprintf(stderr, "cell-http-c: invalid port '%s'\n", argv[i]);
                usage();
            }
            have_port = 1;
        } else {
            fprintf(stderr, "cell-http-c: unexpected argument '%s'\n", argv[i]);
            usage();
        }
    }
    if (!have_port)
        usage();

    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
        perror("cell-http-c: sigprocmask");
        return 1;
    }
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) {
        perror("cell-http-c: signalfd");
        return 1;
    }

    int lfd = http_listen("cell-http-c", (unsigned)port, SOCK_NONBLOCK, 4096);
    if (lfd < 0)
        return 1;

    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) {
        perror("cell-http-c: epoll_create1");
        return 1;
    }
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_LISTEN };
    struct epoll_event sev = { .events = EPOLLIN, .data.u64 = TAG_SIGNAL };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) < 0 ||
        epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &sev) < 0) {
        perror("cell-http-c: epoll_ctl");
        return 1;
    }
    spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

    fprintf(stderr, "listening on 127.0.0.1:%llu\n", port);

    struct epoll_event events[MAX_EVENTS];
    int running = 1;
    while (running) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("cell-http-c: epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = events[i].data.u64;
            if (tag == TAG_LISTEN) {
                do_accept(lfd);
            } else if (tag == TAG_SIGNAL) {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                    running = 0;
            } else {
                /* A conn is only closed while handling its own event (epoll
                 * reports an fd at most once per wait), so no stale entries;
                 * the NULL check is belt and braces. */
                if (tag < conns_cap && conns[tag])
                    on_conn_event(conns[tag], events[i].events);
            }
        }
    }

    for (size_t fd = 0; fd < conns_cap; fd++)
        if (conns[fd])
            conn_close(conns[fd]);
    free(conns);
    close(lfd);
    close(sfd);
    close(epfd);
    if (spare_fd >= 0)
        close(spare_fd);
    return 0;
}
