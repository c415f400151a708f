/* mem-ceiling-gnutls: how fast bulk TLS can go in memory on this host with
 * nothing but GnuTLS in the way: a client and a server session whose push
 * and pull functions write to and read from each other's buffer, in one
 * thread, the client writing chunks and the server reading each one whole.
 * scripts/bench --parts gnutls runs it beside `tlscmp speed --tls-lib gnutls
 * --parts bulk`, alternating, as the ceiling that figure should reach (as
 * bench/mem-ceiling.c is OpenSSL's).
 *
 * Both ends run TLS 1.3 with AES-128-GCM (or AES-256-GCM), a throwaway
 * P-256 certificate made in memory, the client checking nothing. The clock
 * starts after the handshake and a few chunks and covers every
 * gnutls_record_send and gnutls_record_recv of the chunks after them.
 *
 * Build:  cc -O2 -o mem-ceiling-gnutls bench/mem-ceiling-gnutls.c -lgnutls
 * Usage:  mem-ceiling-gnutls MIB CHUNK_KIB [AES-128-GCM|AES-256-GCM]
 * Prints: cipher=… bytes=… chunk=… us=… MBps=…  (MB = 10^6 bytes) */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pipe {
  unsigned char* bytes;
  size_t size, taken, capacity;
};
struct end {
  gnutls_session_t session;
  struct pipe* in;
  struct pipe* out;
};

static void fail(const char* what, int ret) {
  fprintf(stderr, "mem-ceiling-gnutls: %s: %s\n", what, gnutls_strerror(ret));
  exit(1);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static ssize_t push(gnutls_transport_ptr_t self, const void* data, size_t size) {
  struct pipe* out = ((struct end*)self)->out;
  if (out->size + size > out->capacity) {
    out->capacity = (out->size + size) * 2;
    out->bytes = realloc(out->bytes, out->capacity);
  }
  memcpy(out->bytes + out->size, data, size);
  out->size += size;
  return (ssize_t)size;
}

static ssize_t pull(gnutls_transport_ptr_t self, void* data, size_t size) {
  struct end* e = self;
  size_t ready = e->in->size - e->in->taken;
  if (ready == 0) {
    gnutls_transport_set_errno(e->session, EAGAIN);
    return -1;
  }
  size_t n = ready < size ? ready : size;
  memcpy(data, e->in->bytes + e->in->taken, n);
  e->in->taken += n;
  if (e->in->taken == e->in->size) e->in->taken = e->in->size = 0;
  return (ssize_t)n;
}

static int pull_timeout(gnutls_transport_ptr_t self, unsigned ms) {
  (void)ms;
  struct end* e = self;
  return e->in->size > e->in->taken;
}

static gnutls_certificate_credentials_t server_credentials(void) {
  gnutls_x509_privkey_t key;
  gnutls_x509_crt_t crt;
  int ret;
  gnutls_x509_privkey_init(&key);
  if ((ret = gnutls_x509_privkey_generate2(key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1),
                                          0, NULL, 0)) < 0)
    fail("cannot make a key", ret);
  gnutls_x509_crt_init(&crt);
  unsigned char serial = 1;
  gnutls_x509_crt_set_version(crt, 3);
  gnutls_x509_crt_set_serial(crt, &serial, 1);
  gnutls_x509_crt_set_activation_time(crt, time(NULL) - 60);
  gnutls_x509_crt_set_expiration_time(crt, time(NULL) + 24 * 3600);
  gnutls_x509_crt_set_dn(crt, "CN=mem-ceiling", NULL);
  gnutls_x509_crt_set_key(crt, key);
  if ((ret = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0)) < 0) fail("cannot sign", ret);
  gnutls_certificate_credentials_t credentials;
  gnutls_certificate_allocate_credentials(&credentials);
  if ((ret = gnutls_certificate_set_x509_key(credentials, &crt, 1, key)) < 0) fail("cannot use the key", ret);
  return credentials;
}

static int step(gnutls_session_t s) {
  int ret = gnutls_handshake(s);
  if (ret == GNUTLS_E_SUCCESS) return 1;
  if (ret == GNUTLS_E_AGAIN || !gnutls_error_is_fatal(ret)) return 0;
  fail("the handshake failed", ret);
  return 0;
}

/* The client writes the chunk whole; the server reads it all. */
static void chunk(struct end* client, struct end* server, const unsigned char* data, unsigned char* sink,
                  size_t size) {
  for (size_t sent = 0; sent < size;) {
    ssize_t n = gnutls_record_send(client->session, data + sent, size - sent);
    if (n < 0) fail("cannot write", (int)n);
    sent += (size_t)n;
  }
  for (size_t left = size; left > 0;) {
    ssize_t n = gnutls_record_recv(server->session, sink, left);
    if (n > 0) {
      left -= (size_t)n;
    } else if (n != GNUTLS_E_AGAIN || server->in->size == server->in->taken) {
      fail("cannot read", (int)n);
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mem-ceiling-gnutls MIB CHUNK_KIB [AES-128-GCM|AES-256-GCM]\n");
    return 2;
  }
  const size_t total = (size_t)atol(argv[1]) << 20;
  const size_t size = (size_t)atol(argv[2]) << 10;
  const char* cipher = argc > 3 ? argv[3] : "AES-128-GCM";
  char priority[128];
  snprintf(priority, sizeof priority, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+%s", cipher);
  struct pipe to_server = {0}, to_client = {0};
  struct end client = {NULL, &to_client, &to_server}, server = {NULL, &to_server, &to_client};
  gnutls_certificate_credentials_t credentials = server_credentials(), none;
  gnutls_certificate_allocate_credentials(&none);
  gnutls_init(&server.session, GNUTLS_SERVER | GNUTLS_NONBLOCK);
  gnutls_init(&client.session, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
  gnutls_credentials_set(server.session, GNUTLS_CRD_CERTIFICATE, credentials);
  gnutls_credentials_set(client.session, GNUTLS_CRD_CERTIFICATE, none);
  struct end* ends[] = {&client, &server};
  for (int i = 0; i < 2; ++i) {
    int ret = gnutls_priority_set_direct(ends[i]->session, priority, NULL);
    if (ret < 0) fail("unknown cipher", ret);
    gnutls_transport_set_ptr(ends[i]->session, ends[i]);
    gnutls_transport_set_push_function(ends[i]->session, push);
    gnutls_transport_set_pull_function(ends[i]->session, pull);
    gnutls_transport_set_pull_timeout_function(ends[i]->session, pull_timeout);
  }
  int client_done = 0, server_done = 0;
  for (int i = 0; i < 64 && !(client_done && server_done); ++i) {
    if (!client_done) client_done = step(client.session);
    if (!server_done) server_done = step(server.session);
  }
  unsigned char* data = malloc(size);
  unsigned char* sink = malloc(size);
  memset(data, 0x42, size);
  for (int i = 0; i < 4; ++i) chunk(&client, &server, data, sink, size);  /* buffers allocated, caches warm */
  const size_t chunks = total / size > 0 ? total / size : 1;
  const double start = seconds_now();
  for (size_t i = 0; i < chunks; ++i) chunk(&client, &server, data, sink, size);
  const double us = (seconds_now() - start) * 1e6;
  printf("cipher=%s bytes=%zu chunk=%zu us=%.0f MBps=%.1f\n", cipher, chunks * size, size, us,
         (double)(chunks * size) / us);
  return 0;
}
