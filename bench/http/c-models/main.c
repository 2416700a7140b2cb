/*
 * cell-http-c-models: the C server's request handling (../c/http.h, the same
 * code c/main.c runs) under three classic concurrency models, one per build.
 * They exist so that a comparison can vary the concurrency model and nothing
 * else: parsing, routing, the five workloads and every status answer are
 * byte for byte those of the epoll server.
 *
 *   -DMODEL_SERIAL     one connection at a time: accept, serve it (keep-alive,
 *                      pipelining) until the client closes it, accept the next.
 *   -DMODEL_FORK_CONN  fork per connection: the parent accepts and forks; the
 *                      child serves that connection (keep-alive) with blocking
 *                      I/O and exits.
 *   -DMODEL_FORK_REQ   fork per request: as above, but the child answers one
 *                      request with "Connection: close" and closes.
 *
 * Build (any one model; gcc, clang and tcc all work):
 *   cc -O2 -DMODEL_SERIAL    -o cell-http-c-serial    bench/http/c-models/main.c
 *   cc -O2 -DMODEL_FORK_CONN -o cell-http-c-fork-conn bench/http/c-models/main.c
 *   cc -O2 -DMODEL_FORK_REQ  -o cell-http-c-fork-req  bench/http/c-models/main.c
 *
 * Usage: <binary> PORT. Binds 127.0.0.1 only, prints one line on stderr,
 * nothing on stdout, reads no environment, exits 0 on SIGTERM or SIGINT.
 * The fork models' parent reaps every child as soon as it exits (SIGCHLD
 * through a signalfd), so the children's CPU time is in the parent's
 * rusage children totals; a child dies with its parent (PR_SET_PDEATHSIG),
 * and on SIGTERM the parent kills and reaps the children left, then exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../c/http.h"

#if defined(MODEL_SERIAL) + defined(MODEL_FORK_CONN) + defined(MODEL_FORK_REQ) != 1
#error "define exactly one of MODEL_SERIAL, MODEL_FORK_CONN and MODEL_FORK_REQ"
#endif

#if defined(MODEL_SERIAL)
#define NAME "cell-http-c-serial"
#elif defined(MODEL_FORK_CONN)
#define NAME "cell-http-c-fork-conn"
#define ONE_REQUEST 0
#else
#define NAME "cell-http-c-fork-req"
#define ONE_REQUEST 1
#endif

#define BACKLOG 4096 /* the kernel caps it at net.core.somaxconn */
#define ACCEPT_BATCH 16 /* fork models: accepts between two looks at the signalfd */

/* ---- one connection, blocking I/O --------------------------------------- */

/* Send all queued output. -1: the peer is gone. */
static int send_all(int fd, struct http_conn *h)
{
    while (http_pending(h)) {
        ssize_t n = send(fd, h->out.p + h->out_off, http_pending(h), MSG_NOSIGNAL);
        if (n > 0)
            h->out_off += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else
            return -1;
    }
    h->out.len = h->out_off = 0;
    return 0;
}

/* Serve one accepted connection until either side closes it, then close it.
 * one_request: answer the first request with "Connection: close" and stop. */
static void serve_conn(int fd, int one_request)
{
    struct http_conn h;
    char sink[4096];

    if (http_init(&h, one_request) < 0) {
        close(fd);
        return;
    }
    while (!h.closing && h.in_len < h.in_cap) {
        ssize_t n = recv(fd, h.in + h.in_len, h.in_cap - h.in_len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the client closed (a partial request is dropped), or an error */
        h.in_len += (size_t)n;
        /* Answer every complete request, sending as we go. http_process stops
         * at a 64 KiB backlog, so run it again after each send while it
         * still produces output and input is left. */
        int more;
        do {
            if (http_process(&h) < 0)
                goto done;
            more = http_pending(&h) > 0 && h.in_len > 0;
            if (send_all(fd, &h) < 0)
                goto done;
        } while (more && !h.closing);
    }
    /* (The loop's full-buffer test is only a guard: http_process never leaves
     * the buffer full; it answers 431 to a head that fills it and grows it to
     * hold a POST body.) */
done:
    /* Drain what the peer already sent, so close() sends FIN rather than an
     * RST that could destroy the response still in flight. Bounded. */
    for (int i = 0; i < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
    http_free(&h);
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- setup -------------------------------------------------------------- */

static _Noreturn void usage(void)
{
    fputs("usage: " NAME " PORT\n", stderr);
    exit(2);
}

static unsigned parse_port(const char *s)
{
    unsigned long long v;
    return parse_num(s, 65535, &v) < 0 ? 0 : (unsigned)v;
}

/* The listening socket on 127.0.0.1:port; exits 1 on failure. */
static int open_listener(unsigned port, int type_flags)
{
    int lfd = http_listen(NAME, port, type_flags, BACKLOG);
    if (lfd < 0)
        exit(1);
    return lfd;
}

#if defined(MODEL_SERIAL)

/* ---- serial ------------------------------------------------------------- */

/* Nothing is buffered that could be lost and the kernel closes the sockets,
 * so leaving at once is a clean exit; _exit is async-signal-safe, and unlike
 * a flag it cannot miss a signal that lands just before a blocking recv. */
static void on_term(int sig)
{
    (void)sig;
    _exit(0);
}

static int run(unsigned port)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0) {
        perror(NAME ": sigaction");
        return 1;
    }

    int lfd = open_listener(port, 0);
    fprintf(stderr, "listening on 127.0.0.1:%u\n", port);
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue; /* EINTR, ECONNABORTED, or something transient */
        set_nodelay(fd);
        serve_conn(fd, 0);
    }
}

#else

/* ---- fork per connection / per request ---------------------------------- */

static pid_t *kids;   /* the children not reaped yet */
static size_t nkids, kids_cap;

static int kids_add(pid_t pid)
{
    if (nkids == kids_cap) {
        size_t cap = kids_cap ? kids_cap * 2 : 256;
        pid_t *p = realloc(kids, cap * sizeof *p);
        if (!p)
            return -1;
        kids = p;
        kids_cap = cap;
    }
    kids[nkids++] = pid;
    return 0;
}

static void kids_remove(pid_t pid)
{
    for (size_t i = nkids; i-- > 0;) {
        if (kids[i] == pid) {
            kids[i] = kids[--nkids];
            return;
        }
    }
}

/* Reap every child that has exited, without blocking. */
static void reap(void)
{
    pid_t pid;
    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
        kids_remove(pid);
}

/* The child: serve the connection, never return. */
static _Noreturn void child(int fd, int lfd, int sfd, pid_t parent, const sigset_t *mask)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0); /* the parent died before prctl took effect */
    close(lfd);
    close(sfd);
    /* Unblock SIGTERM and SIGINT (their action is the default, so a ^C from
     * a terminal ends the child too; the parent ends it with SIGKILL). */
    sigprocmask(SIG_SETMASK, mask, NULL);
    set_nodelay(fd);
    serve_conn(fd, ONE_REQUEST);
    _exit(0);
}

/* Accept what is queued, a child for each connection, at most ACCEPT_BATCH:
 * under load the queue refills as fast as it drains, and the caller must get
 * back to reaping (and to SIGTERM) in between. */
static void accept_some(int lfd, int sfd, pid_t self, const sigset_t *mask)
{
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC); /* blocking socket for the child */
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN, or something transient (EMFILE cannot last: fds close at once) */
        }
        pid_t pid = fork();
        if (pid == 0)
            child(fd, lfd, sfd, self, mask);
        if (pid > 0 && kids_add(pid) < 0)
            kill(pid, SIGKILL); /* cannot track it: end it, reap() collects it */
        close(fd); /* the child has its copy; if fork failed, the client sees a close */
    }
}

static int run(unsigned port)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &block, &old) < 0) {
        perror(NAME ": sigprocmask");
        return 1;
    }
    /* SIGCHLD must not be SIG_IGN (which a parent could have left us):
     * children stay waitable and their CPU time reaches our rusage when
     * reaped. */
    signal(SIGCHLD, SIG_DFL);
    int sfd = signalfd(-1, &block, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) {
        perror(NAME ": signalfd");
        return 1;
    }
    int lfd = open_listener(port, SOCK_NONBLOCK);
    pid_t self = getpid();
    fprintf(stderr, "listening on 127.0.0.1:%u\n", port);

    int running = 1, status = 0;
    while (running) {
        struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror(NAME ": poll");
            status = 1;
            break;
        }
        if (pfd[0].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                if (si.ssi_signo != SIGCHLD)
                    running = 0;
            reap();
        }
        if (running && pfd[1].revents)
            accept_some(lfd, sfd, self, &old);
    }

    close(lfd);
    for (size_t i = 0; i < nkids; i++)
        kill(kids[i], SIGKILL);
    while (nkids) {
        pid_t pid = waitpid(-1, NULL, 0);
        if (pid > 0)
            kids_remove(pid);
        else if (errno != EINTR)
            break; /* ECHILD: none left */
    }
    free(kids);
    close(sfd);
    return status;
}

#endif

int main(int argc, char **argv)
{
    unsigned port;
    if (argc != 2 || (port = parse_port(argv[1])) == 0) {
        if (argc == 2)
            fprintf(stderr, NAME ": invalid port '%s'\n", argv[1]);
        usage();
    }
    signal(SIGPIPE, SIG_IGN); /* sends use MSG_NOSIGNAL too */
    return run(port);
}
