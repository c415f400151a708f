/* mem-ceiling: how fast bulk TLS can go in memory on this host, with nothing
 * but OpenSSL in the way: a client and a server SSL object joined by a BIO
 * pair, in one thread, the client writing chunks and the server reading
 * each one whole. scripts/bench runs it beside `tlscmp speed --parts bulk`,
 * alternating, as the ceiling that figure should reach.
 *
 * Both ends run TLS 1.3 with the suite asked for, a throwaway P-256
 * certificate made in memory, and the server reading ahead as tlscmp's
 * contexts do. The clock starts after the handshake and a few chunks (the
 * buffers allocated, as tlscmp speed warms up) and covers every SSL_write
 * and SSL_read of the chunks after them, the loop between included.
 *
 * Build:  cc -O2 -o mem-ceiling bench/mem-ceiling.c -lssl -lcrypto
 * Usage:  mem-ceiling MIB CHUNK_KIB [SUITE] [READ_AHEAD_BYTES]
 *         SUITE: a TLS 1.3 suite, TLS_AES_128_GCM_SHA256 by default;
 *         READ_AHEAD_BYTES: the reader's read-ahead, 262144 by default.
 * Prints: suite=… bytes=… chunk=… us=… MBps=…  (MB = 10^6 bytes) */
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail(const char* what) {
  fprintf(stderr, "mem-ceiling: %s\n", what);
  ERR_print_errors_fp(stderr);
  exit(1);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static SSL_CTX* server_context(const char* suite, long read_ahead) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == NULL || cert == NULL) fail("cannot make a key");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char*)"mem-ceiling", -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, key);
  if (X509_sign(cert, key, EVP_sha256()) == 0) fail("cannot sign the certificate");
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL || SSL_CTX_use_certificate(ctx, cert) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1)
    fail("cannot set up the server's TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_set_ciphersuites(ctx, suite) != 1) fail("unknown TLS 1.3 suite");
  if (read_ahead > 0) {
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, (size_t)read_ahead);
  }
  return ctx;
}

static SSL_CTX* client_context(const char* suite) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == NULL) fail("cannot set up the client's TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_set_ciphersuites(ctx, suite) != 1) fail("unknown TLS 1.3 suite");
  return ctx;
}

/* One chunk: written whole by the client, read whole by the server. */
static void move_chunk(SSL* client, SSL* server, const unsigned char* data, unsigned char* sink, int chunk) {
  if (SSL_write(client, data, chunk) != chunk) fail("the client could not write its chunk");
  for (int left = chunk; left > 0;) {
    const int got = SSL_read(server, sink, left);
    if (got <= 0) fail("the server could not read the chunk");
    left -= got;
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mem-ceiling MIB CHUNK_KIB [SUITE] [READ_AHEAD_BYTES]\n");
    return 2;
  }
  const long long bytes = atoll(argv[1]) * 1024 * 1024;
  const int chunk = atoi(argv[2]) * 1024;
  const char* suite = argc > 3 ? argv[3] : "TLS_AES_128_GCM_SHA256";
  const long read_ahead = argc > 4 ? atol(argv[4]) : 262144;
  if (bytes <= 0 || chunk <= 0) fail("MIB and CHUNK_KIB must be positive");

  SSL* client = SSL_new(client_context(suite));
  SSL* server = SSL_new(server_context(suite, read_ahead));
  BIO *client_bio = NULL, *server_bio = NULL;
  /* Room for a whole chunk in records, as tlscmp speed gives its pair: a ring
   * much larger than a chunk makes OpenSSL move what it read ahead more often. */
  size_t buffer = (size_t)chunk + ((size_t)chunk / 16384 + 2) * 64;
  if (buffer < 65536) buffer = 65536;
  if (BIO_new_bio_pair(&client_bio, buffer, &server_bio, buffer) != 1) fail("cannot make a BIO pair");
  SSL_set_bio(client, client_bio, client_bio);
  SSL_set_bio(server, server_bio, server_bio);
  SSL_set_connect_state(client);
  SSL_set_accept_state(server);
  int client_done = 0, server_done = 0;
  for (int step = 0; step < 64 && !(client_done && server_done); ++step) {
    if (!client_done) client_done = SSL_do_handshake(client) == 1;
    if (!server_done) server_done = SSL_do_handshake(server) == 1;
  }
  if (!(client_done && server_done)) fail("the handshake did not finish");

  unsigned char* data = malloc((size_t)chunk);
  unsigned char* sink = malloc((size_t)chunk);
  if (data == NULL || sink == NULL) fail("out of memory");
  memset(data, 0x42, (size_t)chunk);
  for (int i = 0; i < 4; ++i)
    move_chunk(client, server, data, sink, chunk);
  const double start = seconds_now();
  long long moved = 0;
  while (moved < bytes) {
    move_chunk(client, server, data, sink, chunk);
    moved += chunk;
  }
  const double us = (seconds_now() - start) * 1e6;
  printf("suite=%s bytes=%lld chunk=%d us=%.0f MBps=%.1f\n", suite, moved, chunk, us, (double)moved / us);
  return 0;
}
