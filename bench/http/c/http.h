/*
 * http.h: the request handling of the bench/http C servers, independent of
 * how connections are driven. Included by c/main.c (single-threaded epoll)
 * and c-models/main.c (serial, fork per connection, fork per request), so
 * every one of them parses, routes and answers exactly alike.
 *
 * Everything here is static: the header is meant to be included by exactly
 * one translation unit. It owns no socket. A driver keeps one struct
 * http_conn per connection, appends what it receives to in[in_len..in_cap),
 * calls http_process(), sends out.p[out_off..out.len) (http_pending() bytes)
 * and closes the connection once that is sent if `closing` is set.
 *
 * The five workloads of bench/http/README.md:
 *   GET  /                   200 text/plain "hello, world\n"
 *   GET  /json               200 {"message":"Hello, World!"}, serialised per request
 *   GET  /users/ID           200 {"id":ID}, ID an unsigned 64-bit integer (else 404)
 *   POST /users              the body {"name":s,"age":u64,"adult":bool} parsed by the
 *                            small JSON reader below and written back (else 400)
 *   POST /minimal/users/ID   ID as for /users/ID, the body as for POST /users:
 *                            200 {"id":ID,"name":s,"age":u64,"adult":bool}
 * Unknown paths are 404, a wrong method on a known path is 405 with Allow.
 * A POST body over 64 KiB is 413 and a chunked body 501, both closing the
 * connection; a POST body that is not application/json is 415 and one that
 * does not bind is 400. Other bodies are skipped by Content-Length.
 *
 * A driver may define HTTP_ON_REQUEST() before including this header: it is
 * called once for every request served (any status). c/main.c's --leak
 * uses it.
 */
#ifndef CELL_HTTP_H
#define CELL_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef HTTP_ON_REQUEST
#define HTTP_ON_REQUEST() ((void)0)
#endif

#define HEAD_MAX 8192          /* largest request head accepted */
#define BODY_MAX (64 * 1024)   /* largest POST body accepted (else 413) */
#define IN_CAP HEAD_MAX        /* input buffer size; grows to head + body for a POST */
#define OUT_PAUSE (64 * 1024)  /* stop parsing pipelined input past this backlog */
#define JSON_DEPTH 32          /* nesting bound for skipped JSON values */

/* A growable byte buffer. */
struct buf {
    char *p;
    size_t len, cap;
};

/* One connection's HTTP state: its input, its queued output, its framing. */
struct http_conn {
    char *in;
    size_t in_len, in_cap;
    struct buf out;
    size_t out_off;     /* bytes of out already sent (the driver advances it) */
    int closing;        /* close once the output is flushed */
    int continued;      /* "100 Continue" sent for the request being read */
    int one_request;    /* answer one request with Connection: close, then close */
    uint64_t discard;   /* request-body bytes still to skip */
};

/* One process serves one request at a time, so the JSON scratch space is shared. */
static struct buf json_out;       /* a JSON response body being written */
static char name_buf[BODY_MAX];   /* a decoded string is never longer than its JSON text */

static int buf_put(struct buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int buf_str(struct buf *b, const char *s)
{
    return buf_put(b, s, strlen(s));
}

/* ---- JSON writer -------------------------------------------------------- */

/* s[0..n) is valid UTF-8; only quotes, backslashes and controls need escapes. */
static int put_json_string(struct buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* start of the bytes not yet copied */

    if (buf_put(b, "\"", 1) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        char esc[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
        size_t en = 6;
        switch (ch) {
        case '"': esc[1] = '"'; en = 2; break;
        case '\\': esc[1] = '\\'; en = 2; break;
        case '\n': esc[1] = 'n'; en = 2; break;
        case '\r': esc[1] = 'r'; en = 2; break;
        case '\t': esc[1] = 't'; en = 2; break;
        default: break;
        }
        if (buf_put(b, s + run, i - run) < 0 || buf_put(b, esc, en) < 0)
            return -1;
        run = i + 1;
    }
    if (buf_put(b, s + run, n - run) < 0)
        return -1;
    return buf_put(b, "\"", 1);
}

static int put_u64(struct buf *b, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return buf_put(b, tmp + i, sizeof tmp - i);
}

static int put_bool(struct buf *b, int v)
{
    return buf_str(b, v ? "true" : "false");
}

/* ---- JSON reader (RFC 8259, strict, bounded) ----------------------------- */

struct jr {
    const unsigned char *p, *end;
};

static int j_peek(const struct jr *j)
{
    return j->p < j->end ? *j->p : -1;
}

static int j_isdigit(const struct jr *j)
{
    return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

static void j_ws(struct jr *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int j_lit(struct jr *j, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
        return -1;
    j->p += n;
    return 0;
}

static int j_hex4(struct jr *j, unsigned *out)
{
    unsigned v = 0;
    if (j->end - j->p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        unsigned char h = *j->p++;
        unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                   : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                   : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
        if (d == 16)
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* Length of the well-formed UTF-8 sequence at p (p[0] >= 0x80), 0 if none:
 * no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned cp, min;
    size_t n;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) { n = 2; cp = p[0] & 0x1Fu; min = 0x80; }
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) { n = 3; cp = p[0] & 0x0Fu; min = 0x800; }
    else if (p[0] >= 0xF0 && p[0] <= 0xF4) { n = 4; cp = p[0] & 0x07u; min = 0x10000; }
    else return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Append to out[0..cap) what fits; *len counts it all, so an overlong
 * string shows as *len > cap. */
static void emit(char *out, size_t cap, size_t *len, const void *p, size_t n)
{
    if (*len + n <= cap)
        memcpy(out + *len, p, n);
    *len += n;
}

static void emit_utf8(char *out, size_t cap, size_t *len, unsigned cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) { u[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (unsigned char)(0xC0 | cp >> 6); n = 2; }
    else if (cp < 0x10000) { u[0] = (unsigned char)(0xE0 | cp >> 12); n = 3; }
    else { u[0] = (unsigned char)(0xF0 | cp >> 18); n = 4; }
    for (size_t i = 1; i < n; i++)
        u[i] = (unsigned char)(0x80 | ((cp >> (6 * (n - 1 - i))) & 0x3F));
    emit(out, cap, len, u, n);
}

/* A string, decoded into out (may be NULL with cap 0 to only validate). */
static int j_string(struct jr *j, char *out, size_t cap, size_t *len)
{
    *len = 0;
    if (j_peek(j) != '"')
        return -1;
    j->p++;
    for (;;) {
        if (j->p == j->end)
            return -1;
        unsigned char ch = *j->p;
        if (ch == '"') {
            j->p++;
            return 0;
        }
        if (ch < 0x20)
            return -1; /* control characters must be escaped */
        if (ch >= 0x80) {
            size_t n = utf8_len(j->p, j->end);
            if (!n)
                return -1;
            emit(out, cap, len, j->p, n);
            j->p += n;
            continue;
        }
        if (ch != '\\') {
            emit(out, cap, len, j->p++, 1);
            continue;
        }
        if (j->end - j->p < 2)
            return -1;
        char e = (char)j->p[1];
        j->p += 2;
        switch (e) {
        case '"': case '\\': case '/': break;
        case 'b': e = '\b'; break;
        case 'f': e = '\f'; break;
        case 'n': e = '\n'; break;
        case 'r': e = '\r'; break;
        case 't': e = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (j_hex4(j, &cp) < 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: its low half must follow */
                if (j_lit(j, "\\u") < 0 || j_hex4(j, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                    return -1;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            emit_utf8(out, cap, len, cp);
            continue;
        }
        default:
            return -1;
        }
        emit(out, cap, len, &e, 1);
    }
}

/* A number; *uint says whether it is a non-negative integer that fits u64. */
static int j_number(struct jr *j, int *uint, uint64_t *value)
{
    int neg = 0, other = 0;
    uint64_t v = 0;

    if (j_peek(j) == '-') {
        neg = 1;
        j->p++;
    }
    if (!j_isdigit(j))
        return -1;
    if (*j->p == '0') {
        j->p++; /* no leading zeros */
    } else {
        while (j_isdigit(j)) {
            unsigned d = (unsigned)(*j->p++ - '0');
            if (v > (UINT64_MAX - d) / 10)
                other = 1; /* too large: still a number, not a u64 */
            v = v * 10 + d;
        }
    }
    if (j_peek(j) == '.') {
        other = 1;
        j->p++;
        if (!j_isdigit(j))
            return -1;
        while (j_isdigit(j))
            j->p++;
    }
    if (j_peek(j) == 'e' || j_peek(j) == 'E') {
        other = 1;
        j->p++;
        if (j_peek(j) == '+' || j_peek(j) == '-')
            j->p++;
        if (!j_isdigit(j))
            return -1;
        while (j_isdigit(j))
            j->p++;
    }
    *uint = !neg && !other;
    *value = v;
    return 0;
}

/* Check and skip any value (an unknown field's), nesting bounded. */
static int j_skip(struct jr *j, int depth)
{
    size_t n;
    int uint;
    uint64_t v;
    int close;

    if (depth > JSON_DEPTH)
        return -1;
    j_ws(j);
    switch (j_peek(j)) {
    case '"': return j_string(j, NULL, 0, &n);
    case 't': return j_lit(j, "true");
    case 'f': return j_lit(j, "false");
    case 'n': return j_lit(j, "null");
    case '{': close = '}'; break;
    case '[': close = ']'; break;
    default: return j_number(j, &uint, &v);
    }
    j->p++;
    j_ws(j);
    if (j_peek(j) == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            j_ws(j);
            if (j_string(j, NULL, 0, &n) < 0)
                return -1;
            j_ws(j);
            if (j_peek(j) != ':')
                return -1;
            j->p++;
        }
        if (j_skip(j, depth + 1) < 0)
            return -1;
        j_ws(j);
        int c = j_peek(j);
        if (c != ',' && c != close)
            return -1;
        j->p++;
        if (c == close)
            return 0;
    }
}

/* The post-json record. */
struct user {
    const char *name;
    size_t name_len;
    uint64_t age;
    int adult;
};

/* Bind a body to struct user: one object holding "name" (string), "age"
 * (u64) and "adult" (bool), each once; other fields are checked and ignored. */
static int parse_user(const char *body, size_t n, struct user *u)
{
    struct jr j = { (const unsigned char *)body, (const unsigned char *)body + n };
    unsigned seen = 0;

    j_ws(&j);
    if (j_peek(&j) != '{')
        return -1;
    j.p++;
    j_ws(&j);
    if (j_peek(&j) == '}') {
        j.p++;
    } else {
        for (;;) {
            char key[8];
            size_t klen;
            unsigned bit = 0;
            int uint;

            j_ws(&j);
            if (j_string(&j, key, sizeof key, &klen) < 0)
                return -1;
            j_ws(&j);
            if (j_peek(&j) != ':')
                return -1;
            j.p++;
            j_ws(&j);
            if (klen == 4 && memcmp(key, "name", 4) == 0) {
                bit = 1;
                if (j_string(&j, name_buf, sizeof name_buf, &u->name_len) < 0)
                    return -1;
                u->name = name_buf;
            } else if (klen == 3 && memcmp(key, "age", 3) == 0) {
                bit = 2;
                if (j_number(&j, &uint, &u->age) < 0 || !uint)
                    return -1;
            } else if (klen == 5 && memcmp(key, "adult", 5) == 0) {
                bit = 4;
                u->adult = j_peek(&j) == 't';
                if (j_lit(&j, u->adult ? "true" : "false") < 0)
                    return -1;
            } else if (j_skip(&j, 1) < 0) {
                return -1;
            }
            if (seen & bit)
                return -1; /* a duplicate field */
            seen |= bit;
            j_ws(&j);
            int c = j_peek(&j);
            if (c != ',' && c != '}')
                return -1;
            j.p++;
            if (c == '}')
                break;
        }
    }
    j_ws(&j);
    return j.p == j.end && seen == 7 ? 0 : -1;
}

/* ---- responses ---------------------------------------------------------- */

static const char BODY_HELLO[] = "hello, world\n";
static const char BODY_404[] = "not found\n";
static const char BODY_405[] = "method not allowed\n";
static const char BODY_400[] = "bad request\n";
static const char BODY_413[] = "payload too large\n";
static const char BODY_415[] = "unsupported media type\n";
static const char BODY_431[] = "request header fields too large\n";
static const char BODY_501[] = "not implemented\n";
static const char BODY_505[] = "http version not supported\n";
static const char TEXT[] = "text/plain";
static const char JSON[] = "application/json";

enum conn_hdr { CH_NONE, CH_CLOSE, CH_KEEP_ALIVE };

static int respond(struct http_conn *c, const char *status, const char *ctype, const char *extra,
                   enum conn_hdr ch, const char *body, size_t body_len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\n"
                     "Content-Type: %s\r\n"
                     "%s%s"
                     "Content-Length: %zu\r\n"
                     "\r\n",
                     status, ctype, extra,
                     ch == CH_CLOSE ? "Connection: close\r\n"
                     : ch == CH_KEEP_ALIVE ? "Connection: keep-alive\r\n" : "",
                     body_len);
    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    if (buf_put(&c->out, head, (size_t)n) < 0)
        return -1;
    return buf_put(&c->out, body, body_len);
}

static int respond_text(struct http_conn *c, const char *status, enum conn_hdr ch,
                        const char *body, size_t body_len)
{
    return respond(c, status, TEXT, "", ch, body, body_len);
}

/* The hot path: pre-rendered keep-alive 200. */
static const char RESP_HELLO[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "hello, world\n";

/* ---- request parsing ---------------------------------------------------- */

enum route { RT_NONE, RT_HELLO, RT_JSON, RT_USER, RT_USERS, RT_MINIMAL };

struct req {
    const char *method; size_t method_len;
    const char *target; size_t target_len;
    const char *ctype; size_t ctype_len;
    int minor;          /* HTTP/1.<minor> */
    int conn_close, conn_keep_alive;
    int chunked;
    int expect_continue;
    int has_length;
    uint64_t content_length;
    enum route route;
    uint64_t id;        /* the id of RT_USER and RT_MINIMAL */
    const char *body;   /* the whole body, when it was buffered (a POST that reads it) */
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
        } else if (ieq(line, name_len, "content-type")) {
            r->ctype = v;
            r->ctype_len = vn;
        } else if (ieq(line, name_len, "expect")) {
            r->expect_continue = ieq(v, vn, "100-continue");
        } else if (ieq(line, name_len, "transfer-encoding")) {
            r->chunked = 1; /* any transfer-coding: we do not decode bodies */
        }
    }
}

/* The path of the target, without the query; absolute-form reduces to its path. */
static void target_path(const struct req *r, const char **pathp, size_t *lenp)
{
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
    *pathp = path;
    *lenp = plen;
}

/* An id segment: one or more decimal digits, nothing else, fits u64. */
static int parse_id(const char *p, size_t n, uint64_t *id)
{
    uint64_t v = 0;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)p[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *id = v;
    return 0;
}

/* Sets r->route (and r->id for /users/ID and /minimal/users/ID). */
static void classify(struct req *r)
{
    static const char MINIMAL[] = "/minimal/users/";
    const size_t mn = sizeof MINIMAL - 1;
    const char *p;
    size_t n;

    target_path(r, &p, &n);
    r->route = RT_NONE;
    if (n == 1 && p[0] == '/') {
        r->route = RT_HELLO;
    } else if (n == 5 && memcmp(p, "/json", 5) == 0) {
        r->route = RT_JSON;
    } else if (n == 6 && memcmp(p, "/users", 6) == 0) {
        r->route = RT_USERS;
    } else if (n > 7 && memcmp(p, "/users/", 7) == 0) {
        if (parse_id(p + 7, n - 7, &r->id) == 0)
            r->route = RT_USER;
    } else if (n > mn && memcmp(p, MINIMAL, mn) == 0) {
        if (parse_id(p + mn, n - mn, &r->id) == 0)
            r->route = RT_MINIMAL;
    }
}

static int is_method(const struct req *r, const char *m)
{
    size_t n = strlen(m);
    return r->method_len == n && memcmp(r->method, m, n) == 0;
}

/* The paths that take a POST (and read its body); the rest take GET. */
static int is_post_route(enum route rt)
{
    return rt == RT_USERS || rt == RT_MINIMAL;
}

/* POST /users and POST /minimal/users/ID are the only requests whose body is
 * read: wait for all of it. */
static int wants_body(const struct req *r)
{
    return is_post_route(r->route) && is_method(r, "POST") && r->minor >= 0 &&
           !r->chunked && r->content_length <= BODY_MAX;
}

/* application/json, any case, parameters allowed. */
static int is_json_type(const struct req *r)
{
    size_t wn = sizeof JSON - 1;
    const char *v = r->ctype;
    if (!v || r->ctype_len < wn || strncasecmp(v, JSON, wn) != 0)
        return 0;
    return r->ctype_len == wn || v[wn] == ';' || v[wn] == ' ' || v[wn] == '\t';
}

/* ---- serving ------------------------------------------------------------ */

/* Bytes of output queued and not yet sent. */
static size_t http_pending(const struct http_conn *c)
{
    return c->out.len - c->out_off;
}

/* The JSON workloads: json_out holds the body once these return 0. */
static int write_message(void)
{
    json_out.len = 0;
    return buf_str(&json_out, "{\"message\":") < 0 ||
           put_json_string(&json_out, "Hello, World!", 13) < 0 ||
           buf_str(&json_out, "}") < 0 ? -1 : 0;
}

static int write_id(uint64_t id)
{
    json_out.len = 0;
    return buf_str(&json_out, "{\"id\":") < 0 || put_u64(&json_out, id) < 0 ||
           buf_str(&json_out, "}") < 0 ? -1 : 0;
}

/* The post-json record; with has_id, the minimal workload's id merged in first. */
static int write_user(const struct user *u, int has_id, uint64_t id)
{
    json_out.len = 0;
    if (has_id && (buf_str(&json_out, "{\"id\":") < 0 || put_u64(&json_out, id) < 0 ||
                   buf_str(&json_out, ",") < 0))
        return -1;
    return buf_str(&json_out, has_id ? "\"name\":" : "{\"name\":") < 0 ||
           put_json_string(&json_out, u->name, u->name_len) < 0 ||
           buf_str(&json_out, ",\"age\":") < 0 || put_u64(&json_out, u->age) < 0 ||
           buf_str(&json_out, ",\"adult\":") < 0 || put_bool(&json_out, u->adult) < 0 ||
           buf_str(&json_out, "}") < 0 ? -1 : 0;
}

static int respond_json(struct http_conn *c, enum conn_hdr ch)
{
    return respond(c, "200 OK", JSON, "", ch, json_out.p, json_out.len);
}

/* Handle one parsed request; returns -1 on allocation failure. */
static int serve_request(struct http_conn *c, const struct req *r)
{
    int keep = r->minor >= 1 ? !r->conn_close : (r->conn_keep_alive && !r->conn_close);
    enum conn_hdr ch = CH_NONE;

    HTTP_ON_REQUEST();

    if (r->minor < 0) {
        c->closing = 1;
        return respond_text(c, "505 HTTP Version Not Supported", CH_CLOSE,
                            BODY_505, sizeof BODY_505 - 1);
    }
    if (r->chunked) {
        c->closing = 1;
        return respond_text(c, "501 Not Implemented", CH_CLOSE, BODY_501, sizeof BODY_501 - 1);
    }
    if (!r->body)
        c->discard = r->content_length; /* a body nobody reads is skipped */
    if (!keep || c->one_request) {
        c->closing = 1;
        ch = CH_CLOSE;
    } else if (r->minor == 0) {
        ch = CH_KEEP_ALIVE;
    }

    if (r->route == RT_NONE)
        return respond_text(c, "404 Not Found", ch, BODY_404, sizeof BODY_404 - 1);
    int post = is_post_route(r->route);
    if (!is_method(r, post ? "POST" : "GET"))
        return respond(c, "405 Method Not Allowed", TEXT,
                       post ? "Allow: POST\r\n" : "Allow: GET\r\n", ch,
                       BODY_405, sizeof BODY_405 - 1);

    switch (r->route) {
    case RT_HELLO:
        if (ch == CH_NONE)
            return buf_put(&c->out, RESP_HELLO, sizeof RESP_HELLO - 1);
        return respond_text(c, "200 OK", ch, BODY_HELLO, sizeof BODY_HELLO - 1);
    case RT_JSON:
        return write_message() < 0 ? -1 : respond_json(c, ch);
    case RT_USER:
        return write_id(r->id) < 0 ? -1 : respond_json(c, ch);
    default: { /* RT_USERS, RT_MINIMAL: the body was buffered if it fits */
        struct user u;
        if (!r->body) {
            c->closing = 1;
            return respond_text(c, "413 Content Too Large", CH_CLOSE, BODY_413, sizeof BODY_413 - 1);
        }
        if (!is_json_type(r))
            return respond_text(c, "415 Unsupported Media Type", ch, BODY_415, sizeof BODY_415 - 1);
        if (parse_user(r->body, (size_t)r->content_length, &u) < 0)
            return respond_text(c, "400 Bad Request", ch, BODY_400, sizeof BODY_400 - 1);
        return write_user(&u, r->route == RT_MINIMAL, r->id) < 0 ? -1 : respond_json(c, ch);
    }
    }
}

/* Make room for a head plus a body of up to BODY_MAX bytes. */
static int in_grow(struct http_conn *c, size_t need)
{
    char *p = realloc(c->in, need);
    if (!p)
        return -1;
    c->in = p;
    c->in_cap = need;
    return 0;
}

/* Turn buffered input into responses. Returns -1 if the conn must die now. */
static int http_process(struct http_conn *c)
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
        if (pos == c->in_len || http_pending(c) >= OUT_PAUSE)
            break;

        struct req r;
        long used = parse_request(c->in + pos, c->in_len - pos, &r);
        if (used < 0) {
            c->closing = 1;
            if (respond_text(c, "400 Bad Request", CH_CLOSE, BODY_400, sizeof BODY_400 - 1) < 0)
                return -1;
            break;
        }
        if ((used == 0 && c->in_len - pos >= HEAD_MAX) || used > HEAD_MAX) {
            c->closing = 1;
            if (respond_text(c, "431 Request Header Fields Too Large", CH_CLOSE,
                             BODY_431, sizeof BODY_431 - 1) < 0)
                return -1;
            break;
        }
        if (used == 0)
            break;
        classify(&r);
        size_t need = (size_t)used;
        if (wants_body(&r)) {
            need += (size_t)r.content_length;
            if (c->in_len - pos < need) {
                /* Not all here yet: keep the head, parse it again later. A
                 * client that waits for "100 Continue" gets it, once. */
                if (need > c->in_cap && in_grow(c, need) < 0)
                    return -1;
                if (r.expect_continue && r.minor >= 1 && !c->continued) {
                    c->continued = 1;
                    if (buf_str(&c->out, "HTTP/1.1 100 Continue\r\n\r\n") < 0)
                        return -1;
                }
                break;
            }
            c->continued = 0;
            r.body = c->in + pos + used;
        }
        pos += need;
        if (serve_request(c, &r) < 0)
            return -1;
    }

    if (c->closing) {
        c->in_len = 0; /* anything after a closing request is ignored */
    } else if (pos) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
    }
    /* A large body grew the buffer; give the memory back once it is served. */
    if (c->in_cap > IN_CAP && c->in_len == 0 && in_grow(c, IN_CAP) < 0)
        return -1;
    return 0;
}

/* A fresh connection's state (one_request: see struct http_conn). -1: no memory. */
static int http_init(struct http_conn *c, int one_request)
{
    memset(c, 0, sizeof *c);
    if (!(c->in = malloc(IN_CAP)))
        return -1;
    c->in_cap = IN_CAP;
    c->one_request = one_request;
    return 0;
}

static void http_free(struct http_conn *c)
{
    free(c->in);
    free(c->out.p);
    c->in = c->out.p = NULL;
}


/* ---- setup shared by every server of this code ---------------------------- */

/* A decimal number of at most `max`, no sign, nothing after it: 0, or -1. */
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

/* The listening socket on 127.0.0.1:port (SO_REUSEADDR, `type_flags` such as
 * SOCK_NONBLOCK added to the socket's type); -1 after saying why on stderr,
 * prefixed with `name`. */
static int http_listen(const char *name, unsigned port, int type_flags, int backlog)
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | type_flags, 0);
    if (lfd < 0) {
        fprintf(stderr, "%s: socket: %s\n", name, strerror(errno));
        return -1;
    }
    int one = 1;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const char *what = NULL;
    if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        what = "SO_REUSEADDR";
    else if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0)
        what = "bind 127.0.0.1";
    else if (listen(lfd, backlog) < 0)
        what = "listen";
    if (what) {
        fprintf(stderr, "%s: %s: %s\n", name, what, strerror(errno));
        close(lfd);
        return -1;
    }
    return lfd;
}

#endif /* CELL_HTTP_H */
