/*
 * fanout: hold N graphql-transport-ws subscriptions on 127.0.0.1 and time
 * when each of them receives each alert.
 *
 * It is the fan-out benchmark's load generator. It is written in C because a
 * Python client decoding 1,000 frames per alert costs as much CPU as the
 * gateway spends sending them, on the same two cores, and the benchmark then
 * measures the client (docs/design.md, Performance budgets).
 *
 * Usage: fanout PORT SOCKETS ALERTS TIMEOUT_MS
 *   stdin, line 1: the connection_init message (JSON, one line);
 *   stdin, lines 2..: subscribe messages (JSON, one a line); socket I sends
 *   line 2 + I modulo their count, so the sockets can hold different filters.
 * They come on stdin rather than argv because the first holds an API key.
 *
 * stdout:
 *   "ready" once every socket has its connection_ack and has sent subscribe;
 *   then for each alert K (0-based), once every socket has it:
 *   "alert K <the next message, as the first socket received it>" and
 *   "times K <t0> ... <tN-1>": CLOCK_MONOTONIC nanoseconds at which each
 *   socket read the end of that next frame (Python's time.monotonic_ns()).
 * Exit 0 after ALERTS alerts.
 *
 * ALERTS 0 holds the subscriptions instead, until the process is killed:
 * "ready" once every socket is subscribed, and nothing after; next messages
 * are taken and not compared (with different filters, sockets receive
 * different alerts). TIMEOUT_MS bounds only the subscribing.
 *
 * On a close frame, an error or complete message,
 * a socket error, sockets that disagree on an alert, or TIMEOUT_MS without
 * progress: exit 1 with one line on stderr.
 *
 * Plain C99 + POSIX, and Linux's epoll.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Every buffer is bounded: a larger frame or HTTP head is a failure. */
#define MAX_PAYLOAD (1u << 20)
#define MAX_HTTP_HEAD 8192
#define READ_CHUNK 4096
/* Handshakes in progress at once, so the gateway sees a steady trickle of
 * upgrades rather than a thousand at the same instant. */
#define HANDSHAKES_IN_FLIGHT 100
#define EVENTS_PER_WAIT 256

enum phase { CONNECTING, UPGRADING, INITIALISING, SUBSCRIBED };

struct buffer {
    unsigned char *data;
    size_t len;
    size_t cap;
};

struct conn {
    int fd;
    int index;
    enum phase phase;
    struct buffer in;
    struct buffer out; /* bytes a full socket buffer did not take yet */
    int alerts;        /* next messages received so far */
    int writing;       /* EPOLLOUT is being watched */
};

struct alert {
    char *text;      /* the message as its first receiver read it */
    size_t len;
    uint64_t digest; /* every other receiver must have the same bytes */
    int received;
};

struct run {
    int port;
    int sockets;
    int alert_count;
    long timeout_ms;
    char *init_message;
    char **subscribe_messages;
    int subscribe_count;
    int epoll;
    struct conn *conns;
    struct alert *alerts;
    int64_t *times; /* [alert * sockets + socket] */
    int started;
    int in_flight;
    int subscribed;
    int reported;
    int64_t deadline;
    uint64_t random_state;
};

static void die(const char *format, ...)
{
    va_list args;
    fputs("fanout: ", stderr);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

static void *checked_realloc(void *pointer, size_t size)
{
    void *grown = realloc(pointer, size);
    if (grown == NULL)
        die("out of memory (%zu bytes)", size);
    return grown;
}

static int64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void reset_deadline(struct run *run)
{
    run->deadline = now_ns() + (int64_t)run->timeout_ms * 1000000;
}

/* xorshift64*: keys and masks need to vary, not to be secret. */
static uint64_t next_random(struct run *run)
{
    uint64_t x = run->random_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    run->random_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void seed_random(struct run *run)
{
    int fd = open("/dev/urandom", O_RDONLY);
    uint64_t seed = 0;
    if (fd < 0 || read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
        seed = (uint64_t)now_ns() ^ (uint64_t)getpid();
    if (fd >= 0)
        close(fd);
    run->random_state = seed | 1;
}

static uint64_t fnv1a(const char *text, size_t len)
{
    uint64_t hash = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++) {
        hash ^= (unsigned char)text[i];
        hash *= 1099511628211ULL;
    }
    return hash;
}

static void buffer_reserve(struct buffer *buffer, size_t extra)
{
    size_t needed = buffer->len + extra;
    if (needed <= buffer->cap)
        return;
    size_t cap = buffer->cap ? buffer->cap : READ_CHUNK;
    while (cap < needed)
        cap *= 2;
    buffer->data = checked_realloc(buffer->data, cap);
    buffer->cap = cap;
}

static void buffer_append(struct buffer *buffer, const void *data, size_t len)
{
    buffer_reserve(buffer, len);
    memcpy(buffer->data + buffer->len, data, len);
    buffer->len += len;
}

static void buffer_consume(struct buffer *buffer, size_t len)
{
    memmove(buffer->data, buffer->data + len, buffer->len - len);
    buffer->len -= len;
}

/* ---- sending ---------------------------------------------------------- */

/* Readable always; writable only while connecting or while bytes wait, since
 * an idle socket is always writable and would wake the loop for nothing. */
static void watch(struct run *run, struct conn *conn, int op)
{
    int writing = conn->phase == CONNECTING || conn->out.len > 0;
    if (op == EPOLL_CTL_MOD && writing == conn->writing)
        return;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = conn};
    if (writing)
        event.events |= EPOLLOUT;
    if (epoll_ctl(run->epoll, op, conn->fd, &event) < 0)
        die("socket %d: epoll_ctl: %s", conn->index, strerror(errno));
    conn->writing = writing;
}

static void flush_output(struct run *run, struct conn *conn)
{
    while (conn->out.len > 0) {
        ssize_t sent = send(conn->fd, conn->out.data, conn->out.len, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (sent < 0)
            die("socket %d: send: %s", conn->index, strerror(errno));
        buffer_consume(&conn->out, (size_t)sent);
    }
    watch(run, conn, EPOLL_CTL_MOD);
}

/* A client frame: FIN set, masked with a fresh key (RFC 6455, 5.3). */
static void encode_frame(struct run *run, struct buffer *out, int opcode,
                         const void *payload, size_t len)
{
    unsigned char head[14];
    size_t head_len = 2;
    head[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        head[1] = (unsigned char)(0x80 | len);
    } else if (len <= 0xFFFF) {
        head[1] = 0x80 | 126;
        head[2] = (unsigned char)(len >> 8);
        head[3] = (unsigned char)len;
        head_len = 4;
    } else {
        head[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++)
            head[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        head_len = 10;
    }
    uint32_t mask_word = (uint32_t)next_random(run);
    unsigned char *mask = head + head_len;
    memcpy(mask, &mask_word, 4);
    buffer_append(out, head, head_len + 4);
    buffer_reserve(out, len);
    const unsigned char *bytes = payload;
    for (size_t i = 0; i < len; i++)
        out->data[out->len + i] = bytes[i] ^ mask[i % 4];
    out->len += len;
}

static void send_frame(struct run *run, struct conn *conn, int opcode,
                       const void *payload, size_t len)
{
    encode_frame(run, &conn->out, opcode, payload, len);
    flush_output(run, conn);
}

static void send_text(struct run *run, struct conn *conn, const char *text)
{
    send_frame(run, conn, 0x1, text, strlen(text));
}

static void base64(const unsigned char *bytes, size_t len, char *out)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t group = (uint32_t)bytes[i] << 16;
        if (i + 1 < len)
            group |= (uint32_t)bytes[i + 1] << 8;
        if (i + 2 < len)
            group |= bytes[i + 2];
        out[o++] = alphabet[(group >> 18) & 63];
        out[o++] = alphabet[(group >> 12) & 63];
        out[o++] = i + 1 < len ? alphabet[(group >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? alphabet[group & 63] : '=';
    }
    out[o] = '\0';
}

static void send_upgrade(struct run *run, struct conn *conn)
{
    unsigned char nonce[16];
    char key[25];
    char request[512];
    uint64_t halves[2] = {next_random(run), next_random(run)};
    memcpy(nonce, halves, sizeof nonce);
    base64(nonce, sizeof nonce, key);
    int len = snprintf(request, sizeof request,
                       "GET /graphql HTTP/1.1\r\n"
                       "Host: 127.0.0.1:%d\r\n"
                       "Upgrade: websocket\r\n"
                       "Connection: Upgrade\r\n"
                       "Sec-WebSocket-Key: %s\r\n"
                       "Sec-WebSocket-Version: 13\r\n"
                       "Sec-WebSocket-Protocol: graphql-transport-ws\r\n"
                       "\r\n",
                       run->port, key);
    buffer_append(&conn->out, request, (size_t)len);
    conn->phase = UPGRADING;
    flush_output(run, conn);
}

/* ---- receiving -------------------------------------------------------- */

static size_t string_end(const char *s, size_t n, size_t open_quote)
{
    for (size_t i = open_quote + 1; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i;
    }
    return n;
}

/*
 * The top-level "type" of a protocol message. The alert inside a next
 * message has a "type" of its own, deeper down, so a plain search for the
 * key could find the wrong one. Returns 0 when there is none.
 */
static int message_type(const char *s, size_t n, const char **type, size_t *type_len)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '{' || s[i] == '[') {
            depth++;
        } else if (s[i] == '}' || s[i] == ']') {
            depth--;
        } else if (s[i] == '"') {
            size_t end = string_end(s, n, i);
            if (end == n)
                return 0;
            size_t after = end + 1;
            while (after < n && (s[after] == ' ' || s[after] == '\t'))
                after++;
            int is_type_key = depth == 1 && after < n && s[after] == ':' &&
                              end - i - 1 == 4 && memcmp(s + i + 1, "type", 4) == 0;
            i = end;
            if (!is_type_key)
                continue;
            size_t value = after + 1;
            while (value < n && (s[value] == ' ' || s[value] == '\t'))
                value++;
            if (value >= n || s[value] != '"')
                return 0;
            size_t value_end = string_end(s, n, value);
            if (value_end == n)
                return 0;
            *type = s + value + 1;
            *type_len = value_end - value - 1;
            return 1;
        }
    }
    return 0;
}

/* How much of a message an error line quotes (messages are not
 * NUL-terminated: they sit in the receive buffer). */
static int quoted(size_t len)
{
    return len < 200 ? (int)len : 200;
}

static int type_is(const char *type, size_t len, const char *expected)
{
    return strlen(expected) == len && memcmp(type, expected, len) == 0;
}

static void report_alert(struct run *run, int k)
{
    struct alert *alert = &run->alerts[k];
    printf("alert %d %.*s\n", k, (int)alert->len, alert->text);
    printf("times %d", k);
    for (int i = 0; i < run->sockets; i++)
        printf(" %lld", (long long)run->times[(size_t)k * run->sockets + i]);
    printf("\n");
    fflush(stdout);
    reset_deadline(run);
}

static void record_alert(struct run *run, struct conn *conn, const char *text,
                         size_t len, int64_t arrived)
{
    int k = conn->alerts;
    if (conn->phase != SUBSCRIBED)
        die("socket %d: a next message before it subscribed", conn->index);
    if (run->alert_count == 0) {
        conn->alerts++; /* holding: taken, not compared */
        return;
    }
    if (k >= run->alert_count)
        die("socket %d: more than the %d alerts expected", conn->index, run->alert_count);
    struct alert *alert = &run->alerts[k];
    uint64_t digest = fnv1a(text, len);
    if (alert->received == 0) {
        alert->text = checked_realloc(NULL, len);
        memcpy(alert->text, text, len);
        alert->len = len;
        alert->digest = digest;
    } else if (digest != alert->digest || len != alert->len) {
        die("socket %d: alert %d differs from the other sockets': %.*s", conn->index, k,
            quoted(len), text);
    }
    run->times[(size_t)k * run->sockets + conn->index] = arrived;
    conn->alerts++;
    alert->received++;
    while (run->reported < run->alert_count &&
           run->alerts[run->reported].received == run->sockets)
        report_alert(run, run->reported++);
}

static void on_ack(struct run *run, struct conn *conn)
{
    if (conn->phase != INITIALISING)
        die("socket %d: an unexpected connection_ack", conn->index);
    send_text(run, conn, run->subscribe_messages[conn->index % run->subscribe_count]);
    conn->phase = SUBSCRIBED;
    run->in_flight--;
    reset_deadline(run); /* progress */
    if (++run->subscribed == run->sockets) {
        printf("ready\n");
        fflush(stdout);
        reset_deadline(run);
    }
}

static void on_message(struct run *run, struct conn *conn, const char *text, size_t len,
                       int64_t arrived)
{
    const char *type;
    size_t type_len;
    if (!message_type(text, len, &type, &type_len))
        die("socket %d: a message without a type: %.*s", conn->index, quoted(len), text);
    if (type_is(type, type_len, "next"))
        record_alert(run, conn, text, len, arrived);
    else if (type_is(type, type_len, "connection_ack"))
        on_ack(run, conn);
    else if (type_is(type, type_len, "ping"))
        send_text(run, conn, "{\"type\":\"pong\"}");
    else if (!type_is(type, type_len, "pong"))
        /* error, complete or anything else: the subscription is gone. */
        die("socket %d: the server sent %.*s: %.*s", conn->index, (int)type_len, type,
            quoted(len), text);
}

static void on_close_frame(struct conn *conn, const unsigned char *payload, size_t len)
{
    int code = len >= 2 ? (payload[0] << 8 | payload[1]) : 1005;
    int reason_len = len > 2 ? (int)(len - 2) : 0;
    die("socket %d: closed by the server: %d %.*s", conn->index, code, reason_len,
        (const char *)payload + 2);
}

static void on_frame(struct run *run, struct conn *conn, int fin, int opcode,
                     unsigned char *payload, size_t len, int64_t arrived)
{
    switch (opcode) {
    case 0x1:
        if (!fin)
            die("socket %d: a fragmented message (not supported)", conn->index);
        on_message(run, conn, (const char *)payload, len, arrived);
        break;
    case 0x8:
        on_close_frame(conn, payload, len);
        break;
    case 0x9:
        send_frame(run, conn, 0xA, payload, len);
        break;
    case 0xA:
        break;
    default:
        die("socket %d: an unexpected frame, opcode %d", conn->index, opcode);
    }
}

/*
 * Parses the complete frames at the start of the buffer; a partial frame
 * stays for the next read. Returns the bytes consumed, 0 for "need more".
 */
static size_t parse_frame(struct run *run, struct conn *conn, const unsigned char *start,
                          size_t available, int64_t arrived)
{
    if (available < 2)
        return 0;
    size_t head = 2;
    uint64_t len = start[1] & 0x7F;
    if (start[1] & 0x80)
        die("socket %d: a masked frame from the server", conn->index);
    if (len == 126) {
        head = 4;
        if (available < head)
            return 0;
        len = (uint64_t)start[2] << 8 | start[3];
    } else if (len == 127) {
        head = 10;
        if (available < head)
            return 0;
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | start[2 + i];
    }
    if (len > MAX_PAYLOAD)
        die("socket %d: a frame of %llu bytes, over the %u limit", conn->index,
            (unsigned long long)len, MAX_PAYLOAD);
    if (available < head + len)
        return 0;
    on_frame(run, conn, start[0] & 0x80, start[0] & 0x0F, (unsigned char *)start + head,
             (size_t)len, arrived);
    return head + (size_t)len;
}

static void parse_frames(struct run *run, struct conn *conn, int64_t arrived)
{
    size_t offset = 0;
    for (;;) {
        size_t used = parse_frame(run, conn, conn->in.data + offset, conn->in.len - offset,
                                  arrived);
        if (used == 0)
            break;
        offset += used;
    }
    buffer_consume(&conn->in, offset);
}

static size_t head_end(const unsigned char *data, size_t len)
{
    for (size_t i = 3; i < len; i++)
        if (memcmp(data + i - 3, "\r\n\r\n", 4) == 0)
            return i + 1;
    return 0;
}

static void parse_upgrade(struct run *run, struct conn *conn)
{
    size_t end = head_end(conn->in.data, conn->in.len);
    if (end == 0) {
        if (conn->in.len > MAX_HTTP_HEAD)
            die("socket %d: no end to the upgrade response", conn->index);
        return;
    }
    static const char expected[] = "HTTP/1.1 101 ";
    if (end < sizeof expected - 1 || memcmp(conn->in.data, expected, sizeof expected - 1) != 0) {
        const char *head = (const char *)conn->in.data;
        size_t line = 0;
        while (line < end && head[line] != '\r')
            line++;
        die("socket %d: the upgrade was refused: %.*s", conn->index, quoted(line), head);
    }
    buffer_consume(&conn->in, end);
    conn->phase = INITIALISING;
    send_text(run, conn, run->init_message);
}

static void receive(struct run *run, struct conn *conn)
{
    buffer_reserve(&conn->in, READ_CHUNK);
    ssize_t got = recv(conn->fd, conn->in.data + conn->in.len, conn->in.cap - conn->in.len, 0);
    /* One clock reading per read: every frame it completes arrived then. */
    int64_t arrived = now_ns();
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (got < 0)
        die("socket %d: recv: %s", conn->index, strerror(errno));
    if (got == 0)
        die("socket %d: the server closed the connection without a close frame", conn->index);
    conn->in.len += (size_t)got;
    if (conn->phase == UPGRADING)
        parse_upgrade(run, conn);
    if (conn->phase != UPGRADING)
        parse_frames(run, conn, arrived);
}

/* ---- connections ------------------------------------------------------ */

static void start_connection(struct run *run, struct conn *conn)
{
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(run->port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    conn->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (conn->fd < 0)
        die("socket %d: socket: %s", conn->index, strerror(errno));
    if (fcntl(conn->fd, F_SETFL, O_NONBLOCK) < 0)
        die("socket %d: fcntl: %s", conn->index, strerror(errno));
    conn->phase = CONNECTING;
    if (connect(conn->fd, (struct sockaddr *)&address, sizeof address) < 0 &&
        errno != EINPROGRESS)
        die("socket %d: connect to 127.0.0.1:%d: %s", conn->index, run->port, strerror(errno));
    watch(run, conn, EPOLL_CTL_ADD);
}

static void start_more(struct run *run)
{
    while (run->started < run->sockets && run->in_flight < HANDSHAKES_IN_FLIGHT) {
        struct conn *conn = &run->conns[run->started];
        conn->index = run->started++;
        run->in_flight++;
        start_connection(run, conn);
    }
}

static void on_connected(struct run *run, struct conn *conn)
{
    int error = 0;
    socklen_t size = sizeof error;
    if (getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &error, &size) < 0)
        error = errno;
    if (error != 0)
        die("socket %d: connect to 127.0.0.1:%d: %s", conn->index, run->port, strerror(error));
    send_upgrade(run, conn);
}

static void on_event(struct run *run, struct conn *conn, uint32_t events)
{
    if (conn->phase == CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            on_connected(run, conn);
        return;
    }
    if (events & EPOLLIN)
        receive(run, conn);
    else if (events & (EPOLLERR | EPOLLHUP))
        die("socket %d: the connection failed", conn->index);
    if ((events & EPOLLOUT) && conn->out.len > 0)
        flush_output(run, conn);
}

static void die_of_timeout(const struct run *run)
{
    if (run->subscribed < run->sockets)
        die("timed out after %ld ms: %d of %d sockets subscribed", run->timeout_ms,
            run->subscribed, run->sockets);
    die("timed out after %ld ms waiting for alert %d: %d of %d sockets have it",
        run->timeout_ms, run->reported, run->alerts[run->reported].received, run->sockets);
}

/* ---- set-up and main loop --------------------------------------------- */

static long number_argument(const char *text, const char *name, long low, long high)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || end == text || value < low || value > high)
        die("%s must be a whole number from %ld to %ld, not '%s'", name, low, high, text);
    return value;
}

/* The next line of stdin without its newline; NULL at the end of input. */
static char *next_line(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, stdin);
    if (len <= 0) {
        free(line);
        return NULL;
    }
    if (line[len - 1] == '\n')
        line[--len] = '\0';
    if (len == 0)
        die("an empty line on stdin: one JSON message a line");
    return line;
}

static void read_messages(struct run *run)
{
    run->init_message = next_line();
    if (run->init_message == NULL)
        die("expected the connection_init message as one line on stdin");
    char *line;
    while ((line = next_line()) != NULL) {
        if (run->subscribe_count == run->sockets)
            die("more subscribe messages than the %d sockets", run->sockets);
        run->subscribe_messages = checked_realloc(
            run->subscribe_messages, sizeof(char *) * (size_t)(run->subscribe_count + 1));
        run->subscribe_messages[run->subscribe_count++] = line;
    }
    if (run->subscribe_count == 0)
        die("expected at least one subscribe message on stdin, after connection_init");
}

/* A thousand sockets need more descriptors than a default soft limit of 1,024
 * leaves once the process's own are counted. */
static void raise_descriptor_limit(int sockets)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) < 0 || limit.rlim_cur >= (rlim_t)sockets + 64)
        return;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) < 0 || limit.rlim_cur < (rlim_t)sockets + 64)
        die("%d sockets need more file descriptors than the limit (ulimit -n) allows", sockets);
}

static void set_up(struct run *run, int argc, char **argv)
{
    if (argc != 5)
        die("usage: fanout PORT SOCKETS ALERTS TIMEOUT_MS < init-and-subscribe-messages");
    run->port = (int)number_argument(argv[1], "PORT", 1, 65535);
    run->sockets = (int)number_argument(argv[2], "SOCKETS", 1, 100000);
    run->alert_count = (int)number_argument(argv[3], "ALERTS", 0, 10000);
    run->timeout_ms = number_argument(argv[4], "TIMEOUT_MS", 1, 3600000);
    read_messages(run);
    raise_descriptor_limit(run->sockets);
    seed_random(run);
    signal(SIGPIPE, SIG_IGN);
    run->conns = calloc((size_t)run->sockets, sizeof *run->conns);
    run->alerts = calloc((size_t)run->alert_count + 1, sizeof *run->alerts);
    run->times = calloc((size_t)run->sockets * run->alert_count + 1, sizeof *run->times);
    if (run->conns == NULL || run->alerts == NULL || run->times == NULL)
        die("out of memory for %d sockets", run->sockets);
    run->epoll = epoll_create1(0);
    if (run->epoll < 0)
        die("epoll_create1: %s", strerror(errno));
}

/* A close frame (1000, normal) on every socket, so the gateway sees clients
 * that left rather than connections that broke; best effort, the measuring
 * is over. */
static void say_goodbye(struct run *run)
{
    static const unsigned char normal[] = {0x03, 0xE8};
    for (int i = 0; i < run->sockets; i++) {
        struct conn *conn = &run->conns[i];
        conn->out.len = 0;
        encode_frame(run, &conn->out, 0x8, normal, sizeof normal);
        (void)send(conn->fd, conn->out.data, conn->out.len, MSG_NOSIGNAL);
        close(conn->fd);
    }
}

int main(int argc, char **argv)
{
    struct run run = {0};
    struct epoll_event events[EVENTS_PER_WAIT];
    set_up(&run, argc, argv);
    reset_deadline(&run);
    start_more(&run);
    while (run.alert_count == 0 || run.reported < run.alert_count) {
        int holding = run.alert_count == 0 && run.subscribed == run.sockets;
        int64_t left_ms = (run.deadline - now_ns()) / 1000000;
        if (left_ms <= 0 && !holding)
            die_of_timeout(&run);
        int ready = epoll_wait(run.epoll, events, EVENTS_PER_WAIT, holding ? -1 : (int)left_ms);
        if (ready < 0 && errno != EINTR)
            die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < ready; i++)
            on_event(&run, events[i].data.ptr, events[i].events);
        start_more(&run);
    }
    say_goodbye(&run);
    return 0;
}
