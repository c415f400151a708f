/* The project's own copy of the reference request/response loop; scripts/bench builds it and runs it beside tlscmp (--parts rr). */
/* rr-ceiling: reference loops for request/response and connection rates over loopback.
 *
 * The bare minimum, no framework, so that a tool's own overhead shows against it:
 * a forked server and one client, plain TCP or TLS 1.3 (OpenSSL on the socket, TCP_NODELAY).
 *
 *   rr   one connection, closed loop: the client writes REQ bytes, the server answers
 *        RESP bytes, SECONDS long. Timing starts after the handshake.
 *   crr  a new connection per transaction: connect (+ TLS handshake) + 1 byte each way
 *        + close, SECONDS long. tls-resume offers the previous connection's session.
 *
 * Build: cc -O2 -o rr-ceiling rr-ceiling.c -lssl -lcrypto
 * Usage: rr-ceiling rr tcp|tls SECONDS [REQ_BYTES] [RESP_BYTES]     (default 1 and 1)
 *        rr-ceiling crr tcp|tls|tls-resume SECONDS
 * Prints one line: test=… mode=… n=… per_s=… p50_us=… p99_us=… max_us=… */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "rr-ceiling: %s\n", what);
  ERR_print_errors_fp(stderr);
  exit(1);
}

static SSL_CTX *server_ctx(void) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *crt = X509_new();
  if (!key || !crt) die("key generation failed");
  ASN1_INTEGER_set(X509_get_serialNumber(crt), 1);
  X509_gmtime_adj(X509_getm_notBefore(crt), 0);
  X509_gmtime_adj(X509_getm_notAfter(crt), 3600);
  X509_set_pubkey(crt, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(crt), "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1, 0);
  X509_set_issuer_name(crt, X509_get_subject_name(crt));
  if (!X509_sign(crt, key, EVP_sha256())) die("self-signing failed");
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!SSL_CTX_use_certificate(ctx, crt) || !SSL_CTX_use_PrivateKey(ctx, key)) die("loading the certificate failed");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  return ctx;
}

/* Reads or writes exactly n bytes; returns 0 on success. */
static int io_all(int fd, SSL *ssl, char *buf, size_t n, int writing) {
  for (size_t done = 0; done < n;) {
    int r = ssl ? (writing ? SSL_write(ssl, buf + done, (int)(n - done)) : SSL_read(ssl, buf + done, (int)(n - done)))
                : (int)(writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done));
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: rr-ceiling rr tcp|tls SECONDS [REQ] [RESP] | rr-ceiling crr tcp|tls|tls-resume SECONDS\n");
    return 2;
  }
  int crr = strcmp(argv[1], "crr") == 0;
  int tls = strncmp(argv[2], "tls", 3) == 0, resume = strcmp(argv[2], "tls-resume") == 0;
  double seconds = atof(argv[3]);
  size_t req = !crr && argc > 4 ? (size_t)atol(argv[4]) : 1, resp = !crr && argc > 5 ? (size_t)atol(argv[5]) : 1;
  if (seconds <= 0 || req == 0 || resp == 0) die("SECONDS, REQ and RESP must be positive");
  signal(SIGPIPE, SIG_IGN);

  int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (bind(ls, (struct sockaddr *)&addr, sizeof addr) || listen(ls, 1024) ||
      getsockname(ls, (struct sockaddr *)&addr, &len))
    die("cannot listen on loopback");
  size_t cap = req > resp ? req : resp;
  char *buf = calloc(1, cap);

  pid_t server = fork();
  if (server == 0) { /* serves connections one after another until killed */
    SSL_CTX *sctx = tls ? server_ctx() : NULL;
    for (;;) {
      int s = accept(ls, NULL, NULL);
      if (s < 0) continue;
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      SSL *ssl = NULL;
      if (tls) {
        ssl = SSL_new(sctx);
        SSL_set_fd(ssl, s);
        if (SSL_accept(ssl) != 1) goto next;
      }
      while (io_all(s, ssl, buf, req, 0) == 0 && io_all(s, ssl, buf, resp, 1) == 0) {}
    next:
      if (ssl) SSL_free(ssl);
      close(s);
    }
  }

  SSL_CTX *cctx = tls ? SSL_CTX_new(TLS_client_method()) : NULL;
  SSL_SESSION *session = NULL;
  size_t n = 0, max = 1 << 20;
  double *lat = malloc(max * sizeof *lat);
  int s = -1;
  SSL *ssl = NULL;
  double t0 = 0, end = 0, c0 = 0;
  for (;;) {
    if (s < 0) { /* connect: once for rr, per transaction for crr */
      c0 = now();
      s = socket(AF_INET, SOCK_STREAM, 0);
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (connect(s, (struct sockaddr *)&addr, sizeof addr)) die("connect failed");
      if (tls) {
        ssl = SSL_new(cctx);
        SSL_set_fd(ssl, s);
        if (resume && session) SSL_set_session(ssl, session);
        if (SSL_connect(ssl) != 1) die("client handshake failed");
      }
      if (!crr) t0 = now(), end = t0 + seconds;
      else if (t0 == 0) t0 = c0, end = t0 + seconds;
    }
    double q0 = crr ? c0 : now(); /* a crr transaction's latency includes its connect and handshake */
    if (io_all(s, ssl, buf, req, 1) || io_all(s, ssl, buf, resp, 0)) die("transaction failed");
    double q1 = now();
    if (n < max) lat[n++] = (q1 - q0) * 1e6;
    if (crr) {
      if (ssl) {
        if (resume) {
          if (session) SSL_SESSION_free(session);
          session = SSL_get1_session(ssl);
        }
        SSL_shutdown(ssl);
        SSL_free(ssl);
        ssl = NULL;
      }
      close(s);
      s = -1;
    }
    if (q1 >= end) break;
  }
  double t1 = now();
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  qsort(lat, n, sizeof *lat, cmp);
  printf("test=%s mode=%s req=%zu resp=%zu n=%zu per_s=%.0f p50_us=%.1f p99_us=%.1f max_us=%.1f\n", crr ? "crr" : "rr",
         argv[2], req, resp, n, n / (t1 - t0), lat[n / 2], lat[(size_t)(n * 0.99)], lat[n - 1]);
  return 0;
}
