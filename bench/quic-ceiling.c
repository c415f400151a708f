/* quic-ceiling: reference loops for QUIC beside TLS over TCP, on one TLS library (OpenSSL 3.5 or newer).
 *
 * The bare minimum, no framework, as rr-ceiling.c: a forked server and one client on loopback, each side
 * blocking calls on one connection, the same self-signed ECDSA P-256 certificate and TLS 1.3 for both:
 *
 *   bulk  one connection: the client writes MIB mebibytes in 64 KiB writes (QUIC: on the connection's
 *         one stream, then its FIN), the server reads them all and answers one byte; timed from after the
 *         handshake to that byte.
 *   rr    one connection, closed loop: the client writes REQ bytes, the server answers RESP bytes,
 *         SECONDS long. Timed after the handshake.
 *   crr   a new connection per transaction: connect and handshake, 1 byte each way, close; SECONDS long.
 *
 * Build: cc -O2 -o quic-ceiling quic-ceiling.c -lssl -lcrypto
 * Usage: quic-ceiling bulk tls|quic MIB
 *        quic-ceiling rr tls|quic SECONDS [REQ_BYTES] [RESP_BYTES]     (default 1 and 1)
 *        quic-ceiling crr tls|quic SECONDS
 * Prints one line: test=… mode=… n=… per_s=… (bulk: mbytes_per_s=…) p50_us=… p99_us=… client_cpu_s=…
 * server_cpu_s=… (each process's user and system CPU over the whole run, handshakes included). */
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_NUMBER < 0x30500000L || defined(OPENSSL_IS_BORINGSSL)
#error "quic-ceiling needs OpenSSL 3.5 or newer (a QUIC server)"
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/quic.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const unsigned char kAlpn[] = {6, 't', 'l', 's', 'c', 'm', 'p'};
enum { kChunk = 64 * 1024 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "quic-ceiling: %s\n", what);
  ERR_print_errors_fp(stderr);
  exit(1);
}

static double cpu_s(int who) {
  struct rusage u;
  getrusage(who, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg) {
  (void)ssl;
  (void)arg;
  if (SSL_select_next_proto((unsigned char **)out, out_len, kAlpn, sizeof kAlpn, in, in_len) ==
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_OK;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static SSL_CTX *server_ctx(int quic) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *crt = X509_new();
  if (!key || !crt) die("key generation failed");
  ASN1_INTEGER_set(X509_get_serialNumber(crt), 1);
  X509_gmtime_adj(X509_getm_notBefore(crt), 0);
  X509_gmtime_adj(X509_getm_notAfter(crt), 3600);
  X509_set_pubkey(crt, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(crt), "CN", MBSTRING_ASC, (const unsigned char *)"localhost",
                             -1, -1, 0);
  X509_set_issuer_name(crt, X509_get_subject_name(crt));
  if (!X509_sign(crt, key, EVP_sha256())) die("self-signing failed");
  SSL_CTX *ctx = SSL_CTX_new(quic ? OSSL_QUIC_server_method() : TLS_server_method());
  if (!ctx || !SSL_CTX_use_certificate(ctx, crt) || !SSL_CTX_use_PrivateKey(ctx, key))
    die("loading the certificate failed");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
  return ctx;
}

static SSL_CTX *client_ctx(int quic) {
  SSL_CTX *ctx = SSL_CTX_new(quic ? OSSL_QUIC_client_method() : TLS_client_method());
  if (!ctx) die("cannot make the client context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  return ctx;
}

/* Reads or writes exactly n bytes; returns 0 on success. */
static int io_all(SSL *ssl, char *buf, size_t n, int writing) {
  for (size_t done = 0; done < n;) {
    size_t moved = 0;
    int ok = writing ? SSL_write_ex(ssl, buf + done, n - done, &moved) : SSL_read_ex(ssl, buf + done, n - done, &moved);
    if (!ok) return -1;
    done += moved;
  }
  return 0;
}

static void nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The server's end of one connection: bulk reads `total` bytes and answers a byte (QUIC: then ends its
 * stream); rr answers each request. */
static void serve(SSL *ssl, size_t total, char *buf, size_t req, size_t resp) {
  if (total > 0) {
    for (size_t got = 0; got < total;) {
      size_t moved = 0;
      if (!SSL_read_ex(ssl, buf, total - got < kChunk ? total - got : kChunk, &moved)) return;
      got += moved;
    }
    size_t wrote = 0;
    if (SSL_write_ex(ssl, "k", 1, &wrote) && SSL_is_quic(ssl)) SSL_stream_conclude(ssl, 0);
    return;
  }
  while (io_all(ssl, buf, req, 0) == 0 && io_all(ssl, buf, resp, 1) == 0) {
  }
}

/* A forked server: QUIC on a UDP socket through a listener, TLS on a TCP one; serves connections one after
 * another until killed, then reports its CPU through its exit. */
static pid_t start_server(int quic, int fd, size_t total, size_t req, size_t resp) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  SSL_CTX *ctx = server_ctx(quic);
  char *buf = calloc(1, req > resp ? (req > kChunk ? req : kChunk) : (resp > kChunk ? resp : kChunk));
  SSL *listener = NULL;
  if (quic) {
    nonblocking(fd);
    listener = SSL_new_listener(ctx, 0);
    if (!listener || !SSL_set_fd(listener, fd) || !SSL_listen(listener)) die("cannot listen for QUIC");
  }
  for (;;) {
    SSL *ssl = NULL;
    int s = -1;
    if (quic) {
      ssl = SSL_accept_connection(listener, 0);
      if (!ssl) continue;
    } else {
      int one = 1;
      s = accept(fd, NULL, NULL);
      if (s < 0) continue;
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ssl = SSL_new(ctx);
      SSL_set_fd(ssl, s);
      if (SSL_accept(ssl) != 1) goto next;
    }
    serve(ssl, total, buf, req, resp);
    /* QUIC: a rapid close, which sends CONNECTION_CLOSE and does not wait out the closing period, so that
     * the next connection is accepted at once, as TCP's close lets it be. */
    if (quic) SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
  next:
    SSL_free(ssl);
    if (s >= 0) close(s);
    ERR_clear_error();
  }
}

/* A client connection to `addr`, its handshake done. */
static SSL *connect_to(SSL_CTX *ctx, int quic, const struct sockaddr_in *addr) {
  int one = 1;
  int s = socket(AF_INET, quic ? SOCK_DGRAM : SOCK_STREAM, 0);
  if (s < 0 || connect(s, (const struct sockaddr *)addr, sizeof *addr)) die("connect failed");
  SSL *ssl = SSL_new(ctx);
  if (!ssl) die("cannot make a connection");
  if (quic) {
    nonblocking(s);
    BIO *bio = BIO_new_dgram(s, BIO_CLOSE);
    BIO_ADDR *peer = BIO_ADDR_new();
    if (!bio || !peer || !BIO_ADDR_rawmake(peer, AF_INET, &addr->sin_addr, sizeof addr->sin_addr, addr->sin_port))
      die("cannot make the datagram BIO");
    SSL_set_bio(ssl, bio, bio);
    if (!SSL_set1_initial_peer_addr(ssl, peer)) die("cannot set the peer's address");
    BIO_ADDR_free(peer);
    if (SSL_set_alpn_protos(ssl, kAlpn, sizeof kAlpn) != 0) die("cannot set ALPN");
  } else {
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    SSL_set_fd(ssl, s);
  }
  if (SSL_connect(ssl) != 1) die("client handshake failed");
  return ssl;
}

/* Closes a client connection: QUIC rapidly (CONNECTION_CLOSE, without waiting out the closing period: the
 * client is done, as a TCP client that closes is). */
static void close_connection(SSL *ssl, int quic) {
  int fd = SSL_get_fd(ssl);
  if (quic) {
    SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
  } else {
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
  if (!quic) close(fd);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: quic-ceiling bulk tls|quic MIB | quic-ceiling rr tls|quic SECONDS [REQ] [RESP] | "
            "quic-ceiling crr tls|quic SECONDS\n");
    return 2;
  }
  const int bulk = strcmp(argv[1], "bulk") == 0, crr = strcmp(argv[1], "crr") == 0;
  const int quic = strcmp(argv[2], "quic") == 0;
  if (!quic && strcmp(argv[2], "tls") != 0) die("the mode is tls or quic");
  const double amount = atof(argv[3]);
  size_t req = !crr && !bulk && argc > 4 ? (size_t)atol(argv[4]) : 1;
  size_t resp = !crr && !bulk && argc > 5 ? (size_t)atol(argv[5]) : 1;
  if (amount <= 0 || req == 0 || resp == 0) die("MIB, SECONDS, REQ and RESP must be positive");
  signal(SIGPIPE, SIG_IGN);

  int one = 1, ls = socket(AF_INET, quic ? SOCK_DGRAM : SOCK_STREAM, 0);
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (bind(ls, (struct sockaddr *)&addr, sizeof addr) || (!quic && listen(ls, 1024)) ||
      getsockname(ls, (struct sockaddr *)&addr, &len))
    die("cannot listen on loopback");
  const size_t total = bulk ? (size_t)(amount * 1024 * 1024) : 0;
  const pid_t server = start_server(quic, ls, total, req, resp);
  close(ls);

  SSL_CTX *ctx = client_ctx(quic);
  const size_t cap = bulk ? kChunk : (req > resp ? req : resp);
  char *buf = calloc(1, cap);
  size_t n = 0, max = 1 << 20;
  double *lat = malloc(max * sizeof *lat);
  double t0 = 0, t1 = 0;
  if (bulk) {
    SSL *ssl = connect_to(ctx, quic, &addr);
    t0 = now();
    for (size_t sent = 0; sent < total; sent += kChunk)
      if (io_all(ssl, buf, total - sent < kChunk ? total - sent : kChunk, 1)) die("a write failed");
    if (quic && !SSL_stream_conclude(ssl, 0)) die("cannot end the stream");
    if (io_all(ssl, buf, 1, 0)) die("no answer after the last byte");
    t1 = now();
    n = total;
    close_connection(ssl, quic);
  } else {
    SSL *ssl = NULL;
    double end = 0, c0 = 0;
    for (;;) {
      if (!ssl) { /* connect: once for rr, per transaction for crr */
        c0 = now();
        ssl = connect_to(ctx, quic, &addr);
        if (!crr || t0 == 0) t0 = crr ? c0 : now(), end = t0 + amount;
      }
      const double q0 = crr ? c0 : now(); /* a crr transaction's latency includes its connect and handshake */
      if (io_all(ssl, buf, req, 1) || io_all(ssl, buf, resp, 0)) die("a transaction failed");
      const double q1 = now();
      if (n < max) lat[n] = (q1 - q0) * 1e6;
      ++n;
      if (crr) {
        close_connection(ssl, quic);
        ssl = NULL;
      }
      if (q1 >= end) break;
    }
    t1 = now();
    if (ssl) close_connection(ssl, quic);
  }
  const double client_cpu = cpu_s(RUSAGE_SELF);
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  const double server_cpu = cpu_s(RUSAGE_CHILDREN);
  if (bulk) {
    printf("test=bulk mode=%s bytes=%zu mbytes_per_s=%.1f client_cpu_s=%.3f server_cpu_s=%.3f\n", argv[2], n,
           n / (t1 - t0) / 1e6, client_cpu, server_cpu);
    return 0;
  }
  const size_t kept = n < max ? n : max;
  qsort(lat, kept, sizeof *lat, cmp);
  printf("test=%s mode=%s req=%zu resp=%zu n=%zu per_s=%.0f p50_us=%.1f p99_us=%.1f client_cpu_s=%.3f "
         "server_cpu_s=%.3f\n",
         crr ? "crr" : "rr", argv[2], req, resp, n, n / (t1 - t0), lat[kept / 2], lat[(size_t)(kept * 0.99)],
         client_cpu, server_cpu);
  return 0;
}
