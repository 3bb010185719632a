/* bench/bench_clients.py's stand-in MCP server with no interpreter: it answers `initialize` (echoing the
   offered protocol version), `tools/list` and `ping` from two files, every other request with
   "Method not found", one write(2) per answer; with a third argument it appends when it started and
   when each message came and went to that file (CLOCK_REALTIME, the clock of the bench's log).
   `--sleep-ms N` or `--spin-ms N` first: before anything else it sleeps N ms, or spends N ms of
   processor time, so the bench can tell a server that starts late from one that takes the cores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *buf = malloc(n + 1);
    if (fread(buf, 1, n, f) != (size_t)n) exit(2);
    buf[n] = 0; fclose(f); return buf;
}

static FILE *trace;
static void note(const char *what, const char *detail) {
    if (!trace) return;
    struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(trace, "%ld.%09ld %s %s\n", (long)ts.tv_sec, ts.tv_nsec, what, detail); fflush(trace);
}

/* The raw JSON token after "key": up to the next , or } (numbers, or a string without escapes). */
static int token(const char *line, const char *key, char *out, size_t size) {
    const char *at = strstr(line, key);
    if (!at) return 0;
    at += strlen(key);
    while (*at == ' ' || *at == ':') at++;
    size_t n = 0;
    if (*at == '"') {
        out[n++] = *at++;
        while (*at && *at != '"' && n < size - 2) out[n++] = *at++;
        out[n++] = '"';
    } else {
        while (*at && *at != ',' && *at != '}' && *at != ' ' && n < size - 1) out[n++] = *at++;
    }
    out[n] = 0; return 1;
}

static void put(const char *text) {
    size_t left = strlen(text);
    while (left) { ssize_t w = write(1, text, left); if (w <= 0) exit(0); text += w; left -= w; }
}

static void before_start(const char *how, long ms) {
    if (!strcmp(how, "--sleep-ms")) {
        struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    } else if (!strcmp(how, "--spin-ms")) {
        struct timespec from, now;
        volatile unsigned long sum = 0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &from);
        do {
            for (int i = 0; i < 10000; i++) sum += i;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
        } while ((now.tv_sec - from.tv_sec) * 1000L + (now.tv_nsec - from.tv_nsec) / 1000000L < ms);
    } else {
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc > 2 && !strncmp(argv[1], "--", 2)) {
        before_start(argv[1], atol(argv[2]));
        argc -= 2, argv += 2;
    }
    if (argc < 3) return 2;
    if (argc > 3) trace = fopen(argv[3], "a");
    note("start", "");
    char *init_rest = slurp(argv[1]), *tools = slurp(argv[2]);
    char *line = NULL; size_t cap = 0; ssize_t got;
    char *out = malloc(strlen(init_rest) + strlen(tools) + 512);
    while ((got = getline(&line, &cap, stdin)) > 0) {
        char id[128], method[128], version[128];
        if (!token(line, "\"method\"", method, sizeof method)) continue;
        note("recv", method);
        if (!token(line, "\"id\"", id, sizeof id)) continue;
        if (!strcmp(method, "\"initialize\"")) {
            if (!token(line, "\"protocolVersion\"", version, sizeof version)) strcpy(version, "\"2025-06-18\"");
            sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":%s,%s}\n", id, version, init_rest);
        } else if (!strcmp(method, "\"tools/list\"")) {
            sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n", id, tools);
        } else if (!strcmp(method, "\"ping\"")) {
            sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", id);
        } else {
            sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n", id);
        }
        put(out);
        note("sent", method);
    }
    note("eof", "");
    return 0;
}
