/*
 * cell-http-c: a hello-world HTTP/1.1 server, single-threaded epoll
 * (level-triggered), non-blocking sockets. A cell benchmark target.
 *
 * Usage: cell-http-c PORT [--leak BYTES]
 *
 * GET / answers 200 with "Content-Type: text/plain" and body "hello, world\n";
 * any other path is 404, any other method on / is 405. Binds 127.0.0.1 only,
 * keeps connections alive (HTTP/1.1 default, HTTP/1.0 on request), handles
 * pipelined and split requests, logs nothing per request, exits 0 on SIGTERM.
 *
 * --leak BYTES: for every request served, malloc BYTES, write every page of
 * it and never free it. A deliberate leak, so a soak test can prove that it
 * notices one. Without it, memory stays flat.
 *
 * Build: cc -O2 -o cell-http-c main.c
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

#define IN_CAP 8192            /* largest request head accepted */
#define OUT_PAUSE (64 * 1024)  /* stop parsing pipelined input past this backlog */
#define MAX_EVENTS 256

/* epoll data.u64 tags for the two non-connection fds */
#define TAG_LISTEN UINT64_MAX
#define TAG_SIGNAL (UINT64_MAX - 1)

struct conn {
    int fd;
    uint32_t events;    /* interest currently registered with epoll */
    int read_closed;    /* peer sent FIN */
    int closing;        /* close once the output is flushed */
    uint64_t discard;   /* request-body bytes still to skip */
    size_t in_len;
    char *out;
    size_t out_len, out_off, out_cap;
    char in[IN_CAP];
};

static int epfd = -1;
static struct conn **conns; /* indexed by fd */
static size_t conns_cap;
static int spare_fd = -1;   /* reserved so EMFILE can be shed, see do_accept */

static size_t leak_bytes;
static void *volatile leak_head; /* chain of leaked blocks: keeps them reachable-looking to nobody */

/* ---- responses ---------------------------------------------------------- */

static const char BODY_HELLO[] = "hello, world\n";
static const char BODY_404[] = "not found\n";
static const char BODY_405[] = "method not allowed\n";
static const char BODY_400[] = "bad request\n";
static const char BODY_431[] = "request header fields too large\n";
static const char BODY_501[] = "not implemented\n";
static const char BODY_505[] = "http version not supported\n";

enum conn_hdr { CH_NONE, CH_CLOSE, CH_KEEP_ALIVE };

static int out_append(struct conn *c, const char *p, size_t n)
{
    if (c->out_len + n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 1024;
        while (cap < c->out_len + n)
            cap *= 2;
        char *q = realloc(c->out, cap);
        if (!q)
            return -1;
        c->out = q;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
    return 0;
}

static int respond(struct conn *c, const char *status, const char *extra,
                   enum conn_hdr ch, const char *body, size_t body_len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\n"
                     "Content-Type: text/plain\r\n"
                     "%s%s"
                     "Content-Length: %zu\r\n"
                     "\r\n",
                     status, extra,
                     ch == CH_CLOSE ? "Connection: close\r\n"
                     : ch == CH_KEEP_ALIVE ? "Connection: keep-alive\r\n" : "",
                     body_len);
    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    if (out_append(c, head, (size_t)n) < 0)
        return -1;
    return out_append(c, body, body_len);
}

/* The hot path: pre-rendered keep-alive 200. */
static const char RESP_HELLO[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "hello, world\n";

/* ---- request parsing ---------------------------------------------------- */

struct req {
    const char *method; size_t method_len;
    const char *target; size_t target_len;
    int minor;          /* HTTP/1.<minor> */
    int conn_close, conn_keep_alive;
    int chunked;
    int has_length;
    uint64_t content_length;
};

static int ieq(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    return alen == blen && strncasecmp(a, b, blen) == 0;
}

static void trim(const char **p, size_t *n)
{
    while (*n && (**p == ' ' || **p == '\t')) { (*p)++; (*n)--; }
    while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t')) (*n)--;
}

/* Connection: is a comma-separated token list. */
static void parse_connection(struct req *r, const char *v, size_t n)
{
    while (n) {
        const char *comma = memchr(v, ',', n);
        size_t tl = comma ? (size_t)(comma - v) : n;
        const char *t = v;
        size_t tn = tl;
        trim(&t, &tn);
        if (ieq(t, tn, "close"))
            r->conn_close = 1;
        else if (ieq(t, tn, "keep-alive"))
            r->conn_keep_alive = 1;
        if (!comma)
            break;
        v = comma + 1;
        n -= tl + 1;
    }
}

/*
 * Parse one request head from buf[0..len). Returns the bytes it spans,
 * 0 if it is not complete yet, -1 if malformed.
 */
static long parse_request(const char *buf, size_t len, struct req *r)
{
    size_t pos = 0;
    int first = 1;

    memset(r, 0, sizeof *r);
    for (;;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl)
            return 0;
        const char *line = buf + pos;
        size_t n = (size_t)(nl - line);
        pos += n + 1;
        if (n && line[n - 1] == '\r')
            n--;

        if (first) {
            if (n == 0)
                continue; /* tolerate stray CRLF between requests */
            first = 0;
            const char *sp1 = memchr(line, ' ', n);
            if (!sp1)
                return -1;
            const char *rest = sp1 + 1;
            size_t rn = n - (size_t)(rest - line);
            const char *sp2 = memchr(rest, ' ', rn);
            if (!sp2)
                return -1;
            r->method = line;
            r->method_len = (size_t)(sp1 - line);
            r->target = rest;
            r->target_len = (size_t)(sp2 - rest);
            const char *ver = sp2 + 1;
            size_t vn = n - (size_t)(ver - line);
            if (r->method_len == 0 || r->target_len == 0)
                return -1;
            if (vn != 8 || memcmp(ver, "HTTP/", 5) != 0 || ver[6] != '.' ||
                ver[5] < '0' || ver[5] > '9' || ver[7] < '0' || ver[7] > '9')
                return -1;
            r->minor = ver[5] == '1' ? ver[7] - '0' : -1; /* -1: not HTTP/1.x */
            continue;
        }

        if (n == 0)
            return (long)pos; /* end of head */

        const char *colon = memchr(line, ':', n);
        if (!colon || colon == line)
            return -1;
        size_t name_len = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vn = n - name_len - 1;
        trim(&v, &vn);
        if (ieq(line, name_len, "connection")) {
            parse_connection(r, v, vn);
        } else if (ieq(line, name_len, "content-length")) {
            uint64_t cl = 0;
            if (vn == 0)
                return -1;
            for (size_t i = 0; i < vn; i++) {
                if (v[i] < '0' || v[i] > '9' || cl > (UINT64_MAX - 9) / 10)
                    return -1;
                cl = cl * 10 + (uint64_t)(v[i] - '0');
            }
            if (r->has_length && r->content_length != cl)
                return -1;
            r->has_length = 1;
            r->content_length = cl;
        } else if (ieq(line, name_len, "transfer-encoding")) {
            r->chunked = 1; /* any transfer-coding: we do not decode bodies */
        }
    }
}

/* ---- the deliberate leak ------------------------------------------------ */

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

/* ---- connections -------------------------------------------------------- */

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
    free(c->out);
    free(c);
}

static size_t out_pending(const struct conn *c)
{
    return c->out_len - c->out_off;
}

/* Handle one parsed request; returns -1 on allocation failure. */
static int serve_request(struct conn *c, const struct req *r)
{
    int keep = r->minor >= 1 ? !r->conn_close : (r->conn_keep_alive && !r->conn_close);
    enum conn_hdr ch = CH_NONE;

    leak_once();

    if (r->minor < 0) {
        c->closing = 1;
        return respond(c, "505 HTTP Version Not Supported", "", CH_CLOSE,
                       BODY_505, sizeof BODY_505 - 1);
    }
    if (r->chunked) {
        c->closing = 1;
        return respond(c, "501 Not Implemented", "", CH_CLOSE,
                       BODY_501, sizeof BODY_501 - 1);
    }
    c->discard = r->content_length;
    if (!keep) {
        c->closing = 1;
        ch = CH_CLOSE;
    } else if (r->minor == 0) {
        ch = CH_KEEP_ALIVE;
    }

    /* Path without query; absolute-form targets reduce to their path. */
    const char *path = r->target;
    size_t plen = r->target_len;
    if (plen && path[0] != '/') {
        const char *scheme = plen > 3 ? memchr(path, ':', plen) : NULL;
        if (scheme && (size_t)(scheme - path) + 3 <= plen && scheme[1] == '/' && scheme[2] == '/') {
            const char *host = scheme + 3;
            size_t hn = plen - (size_t)(host - path);
            const char *slash = memchr(host, '/', hn);
            if (slash) {
                plen = hn - (size_t)(slash - host);
                path = slash;
            } else {
                path = "/";
                plen = 1;
            }
        }
    }
    const char *q = memchr(path, '?', plen);
    if (q)
        plen = (size_t)(q - path);

    if (!(plen == 1 && path[0] == '/'))
        return respond(c, "404 Not Found", "", ch, BODY_404, sizeof BODY_404 - 1);
    if (r->method_len != 3 || memcmp(r->method, "GET", 3) != 0)
        return respond(c, "405 Method Not Allowed", "Allow: GET\r\n", ch,
                       BODY_405, sizeof BODY_405 - 1);
    if (ch == CH_NONE)
        return out_append(c, RESP_HELLO, sizeof RESP_HELLO - 1);
    return respond(c, "200 OK", "", ch, BODY_HELLO, sizeof BODY_HELLO - 1);
}

/* Turn buffered input into responses. Returns -1 if the conn must die now. */
static int process_input(struct conn *c)
{
    size_t pos = 0;

    while (!c->closing) {
        if (c->discard) {
            size_t avail = c->in_len - pos;
            size_t skip = c->discard < avail ? (size_t)c->discard : avail;
            pos += skip;
            c->discard -= skip;
            if (c->discard)
                break;
        }
        if (pos == c->in_len || out_pending(c) >= OUT_PAUSE)
            break;

        struct req r;
        long used = parse_request(c->in + pos, c->in_len - pos, &r);
        if (used < 0) {
            c->closing = 1;
            if (respond(c, "400 Bad Request", "", CH_CLOSE, BODY_400, sizeof BODY_400 - 1) < 0)
                return -1;
            break;
        }
        if (used == 0) {
            if (pos == 0 && c->in_len == IN_CAP) {
                c->closing = 1;
                if (respond(c, "431 Request Header Fields Too Large", "", CH_CLOSE,
                            BODY_431, sizeof BODY_431 - 1) < 0)
                    return -1;
            }
            break;
        }
        pos += (size_t)used;
        if (serve_request(c, &r) < 0)
            return -1;
    }

    if (c->closing) {
        c->in_len = 0; /* anything after a closing request is ignored */
    } else if (pos) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
    }
    return 0;
}

/* Write out what we can. Returns -1 on a fatal socket error. */
static int flush_output(struct conn *c)
{
    while (out_pending(c)) {
        ssize_t n = send(c->fd, c->out + c->out_off, out_pending(c), MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return -1;
        }
    }
    c->out_len = c->out_off = 0;
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
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }

    if ((events & (EPOLLIN | EPOLLHUP)) && !c->read_closed && !c->closing) {
        for (;;) {
            if (c->in_len == IN_CAP) {
                /* Full: either a backlog we paused on, or an oversized head
                 * (process_input answers 431 for that). */
                if (process_input(c) < 0) {
                    conn_close(c);
                    return;
                }
                if (c->in_len == IN_CAP || c->closing)
                    break;
            }
            size_t space = IN_CAP - c->in_len;
            ssize_t n = recv(c->fd, c->in + c->in_len, space, 0);
            if (n > 0) {
                c->in_len += (size_t)n;
                if (process_input(c) < 0) {
                    conn_close(c);
                    return;
                }
                if (c->closing || out_pending(c) >= OUT_PAUSE)
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
        if (out_pending(c) || c->closing || c->in_len == 0)
            break;
        size_t before = c->out_len;
        if (process_input(c) < 0) {
            conn_close(c);
            return;
        }
        if (c->out_len == before && !c->closing)
            break; /* only a partial request left: wait for more input */
    }

    if (!out_pending(c) && (c->closing || c->read_closed)) {
        conn_close(c);
        return;
    }

    uint32_t want = 0;
    if (out_pending(c))
        want |= EPOLLOUT;
    if (!c->read_closed && !c->closing && out_pending(c) < OUT_PAUSE)
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
        if (conns_reserve(fd) < 0 || !(c = malloc(sizeof *c))) {
            close(fd);
            continue;
        }
        memset(c, 0, offsetof(struct conn, in));
        c->fd = fd;
        c->events = EPOLLIN;
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)fd };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
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

static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
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

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) {
        perror("cell-http-c: socket");
        return 1;
    }
    int one = 1;
    if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) {
        perror("cell-http-c: SO_REUSEADDR");
        return 1;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        perror("cell-http-c: bind 127.0.0.1");
        return 1;
    }
    if (listen(lfd, 4096) < 0) {
        perror("cell-http-c: listen");
        return 1;
    }

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
