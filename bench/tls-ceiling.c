/* tls-ceiling: how fast one bulk stream can go over loopback on this host,
 * with nothing but the socket calls (and OpenSSL) in the way. scripts/bench
 * runs it beside tlscmp, alternating, as the ceiling tlscmp should reach.
 *
 * A child process accepts and reads; the parent connects and writes. With
 * `tls`, both ends run TLS 1.3 with OpenSSL on a socket BIO (OpenSSL reads
 * and writes the socket itself: no memory BIO, no extra copy), with a
 * throwaway P-256 certificate made in memory. The clock starts once the
 * handshake is done and stops when the writer holds the reader's one-byte
 * acknowledgement, sent after the last byte arrived.
 *
 * Build:  cc -O2 -o tls-ceiling bench/tls-ceiling.c -lssl -lcrypto
 * Usage:  tls-ceiling tcp|tls MIB CHUNK_KIB [SUITE] [READ_AHEAD_BYTES]
 *         SUITE: a TLS 1.3 suite, TLS_AES_128_GCM_SHA256 by default;
 *         READ_AHEAD_BYTES: the reader's read-ahead buffer, 0 (off) by default.
 * Prints: mode=… suite=… bytes=… chunk=… read_ahead=… us=… MBps=…  (MB = 10^6 bytes) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct options {
  int tls;
  long long bytes;
  size_t chunk;
  const char* suite;
  long read_ahead;
};

static void fail(const char* what) {
  fprintf(stderr, "tls-ceiling: %s\n", what);
  ERR_print_errors_fp(stderr);
  exit(1);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The reader's context: TLS 1.3 only, the suite asked for, a P-256 key and a
 * self-signed certificate that live as long as the process. */
static SSL_CTX* reader_context(const struct options* o) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == NULL || cert == NULL) fail("cannot make a key");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char*)"tls-ceiling", -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, key);
  if (X509_sign(cert, key, EVP_sha256()) == 0) fail("cannot sign the certificate");

  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL || SSL_CTX_use_certificate(ctx, cert) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1)
    fail("cannot set up the reader's TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_set_ciphersuites(ctx, o->suite) != 1) fail("unknown TLS 1.3 suite");
  if (o->read_ahead > 0) {
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, (size_t)o->read_ahead);
  }
  return ctx;
}

/* The child: reads until every byte is in, then acknowledges with one byte.
 * Exits 0 only if the count is exact. */
static int read_all(int listener, SSL_CTX* ctx, const struct options* o) {
  int fd = accept(listener, NULL, NULL);
  if (fd < 0) return 4;
  char* buf = malloc(o->chunk);
  if (buf == NULL) return 4;
  SSL* ssl = NULL;
  if (o->tls) {
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) return 5;
  }
  long long have = 0;
  while (have < o->bytes) {
    const int n = o->tls ? SSL_read(ssl, buf, (int)o->chunk) : (int)read(fd, buf, o->chunk);
    if (n > 0) {
      have += n;
    } else if (o->tls || n == 0 || errno != EINTR) {
      break;
    }
  }
  if (write(fd, "!", 1) != 1) return 3;
  return have == o->bytes ? 0 : 2;
}

/* The parent: connects, (TLS) handshakes, then writes and times. */
static double write_all(const struct sockaddr_in* to, const struct options* o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (const struct sockaddr*)to, sizeof *to) != 0) fail("cannot connect");
  SSL* ssl = NULL;
  if (o->tls) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || SSL_CTX_set_ciphersuites(ctx, o->suite) != 1)
      fail("cannot set up the writer's TLS context");
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) fail("the handshake failed");
  }
  char* buf = malloc(o->chunk);
  if (buf == NULL) fail("out of memory");
  memset(buf, 0x5a, o->chunk);

  const double start = seconds_now();
  long long left = o->bytes;
  while (left > 0) {
    const size_t n = (long long)o->chunk < left ? o->chunk : (size_t)left;
    const int w = o->tls ? SSL_write(ssl, buf, (int)n) : (int)write(fd, buf, n);
    if (w > 0) {
      left -= w;
    } else if (o->tls || errno != EINTR) {
      fail("a write failed");
    }
  }
  char ack = 0;
  if (recv(fd, &ack, 1, MSG_WAITALL) != 1) fail("no acknowledgement from the reader");
  return seconds_now() - start;
}

int main(int argc, char** argv) {
  if (argc < 4 || (strcmp(argv[1], "tcp") != 0 && strcmp(argv[1], "tls") != 0)) {
    fprintf(stderr, "usage: tls-ceiling tcp|tls MIB CHUNK_KIB [SUITE] [READ_AHEAD_BYTES]\n");
    return 2;
  }
  struct options o = {
      .tls = strcmp(argv[1], "tls") == 0,
      .bytes = atoll(argv[2]) * 1024 * 1024,
      .chunk = (size_t)atol(argv[3]) * 1024,
      .suite = argc > 4 ? argv[4] : "TLS_AES_128_GCM_SHA256",
      .read_ahead = argc > 5 ? atol(argv[5]) : 0,
  };
  if (o.bytes <= 0 || o.chunk == 0 || o.chunk > (1u << 30)) fail("MIB and CHUNK_KIB must be positive");

  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t addr_len = sizeof addr;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0 || bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, (struct sockaddr*)&addr, &addr_len) != 0)
    fail("cannot listen on 127.0.0.1");
  SSL_CTX* reader_ctx = o.tls ? reader_context(&o) : NULL;

  const pid_t reader = fork();
  if (reader < 0) fail("cannot fork");
  if (reader == 0) _exit(read_all(listener, reader_ctx, &o));
  close(listener);

  const double elapsed = write_all(&addr, &o);
  int status = 0;
  if (waitpid(reader, &status, 0) != reader || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("the reader did not get every byte");
  printf("mode=%s suite=%s bytes=%lld chunk=%zu read_ahead=%ld us=%.0f MBps=%.1f\n", o.tls ? "tls" : "tcp",
         o.tls ? o.suite : "-", o.bytes, o.chunk, o.read_ahead, elapsed * 1e6,
         (double)o.bytes / elapsed / 1e6);
  return 0;
}
