/* mem-ceiling-wolfssl: how fast bulk TLS can go in memory on this host with
 * nothing but wolfSSL in the way: a client and a server connection whose
 * I/O callbacks write to and read from each other's buffer, in one thread,
 * the client writing chunks and the server reading each one whole.
 * scripts/bench --parts wolfssl runs it beside `tlscmp speed --tls-lib
 * wolfssl --parts bulk`, alternating, as the ceiling that figure should
 * reach (as bench/mem-ceiling.c is OpenSSL's).
 *
 * With --aead it is instead what stands in for wolfSSL's own cipher
 * benchmark, which Debian does not package (wolfcrypt/benchmark): its
 * bench_aesgcm loop, AES-128-GCM with the key set once and one call of
 * wc_AesGcmEncrypt per 16 KiB block (a 12-byte IV, 13 bytes of AAD, a
 * 16-byte tag), for the seconds given.
 *
 * Both ends run TLS 1.3 with AES-128-GCM, a throwaway P-256 certificate made
 * in memory, the client checking nothing. The clock starts after the
 * handshake and a few chunks and covers every wolfSSL_write and
 * wolfSSL_read of the chunks after them.
 *
 * Build:  cc -O2 -o mem-ceiling-wolfssl bench/mem-ceiling-wolfssl.c -lwolfssl
 * Usage:  mem-ceiling-wolfssl MIB CHUNK_KIB   |   mem-ceiling-wolfssl --aead SECONDS
 * Prints: cipher=… bytes=… chunk=… us=… MBps=…  (MB = 10^6 bytes) */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pipe {
  unsigned char* bytes;
  size_t size, taken, capacity;
};
struct end {
  WOLFSSL* ssl;
  struct pipe* in;
  struct pipe* out;
  int server;
};

static void fail(const char* what, int ret) {
  fprintf(stderr, "mem-ceiling-wolfssl: %s: %d\n", what, ret);
  exit(1);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int push(WOLFSSL* ssl, char* data, int size, void* self) {
  (void)ssl;
  struct pipe* out = ((struct end*)self)->out;
  if (out->size + (size_t)size > out->capacity) {
    out->capacity = (out->size + (size_t)size) * 2;
    out->bytes = realloc(out->bytes, out->capacity);
  }
  memcpy(out->bytes + out->size, data, (size_t)size);
  out->size += (size_t)size;
  return size;
}

static int pull(WOLFSSL* ssl, char* data, int size, void* self) {
  (void)ssl;
  struct end* e = self;
  size_t ready = e->in->size - e->in->taken;
  if (ready == 0) return WOLFSSL_CBIO_ERR_WANT_READ;
  size_t n = ready < (size_t)size ? ready : (size_t)size;
  memcpy(data, e->in->bytes + e->in->taken, n);
  e->in->taken += n;
  if (e->in->taken == e->in->size) e->in->taken = e->in->size = 0;
  return (int)n;
}

/* A self-signed P-256 certificate and its key, DER, on the server's context. */
static void use_certificate(WOLFSSL_CTX* ctx) {
  static WC_RNG rng;
  static ecc_key key;
  static Cert cert;
  static unsigned char der[4096], key_der[512];
  wc_InitRng(&rng);
  wc_ecc_init(&key);
  if (wc_ecc_make_key_ex(&rng, 32, &key, ECC_SECP256R1) != 0) fail("cannot make a key", 0);
  wc_InitCert(&cert);
  strncpy(cert.subject.commonName, "mem-ceiling", CTC_NAME_SIZE - 1);
  cert.sigType = CTC_SHA256wECDSA;
  int size = wc_MakeCert_ex(&cert, der, sizeof der, ECC_TYPE, &key, &rng);
  if (size < 0) fail("cannot make a certificate", size);
  size = wc_SignCert_ex(cert.bodySz, cert.sigType, der, sizeof der, ECC_TYPE, &key, &rng);
  if (size < 0) fail("cannot sign", size);
  int key_size = wc_EccKeyToDer(&key, key_der, sizeof key_der);
  if (wolfSSL_CTX_use_certificate_buffer(ctx, der, size, WOLFSSL_FILETYPE_ASN1) != WOLFSSL_SUCCESS ||
      wolfSSL_CTX_use_PrivateKey_buffer(ctx, key_der, key_size, WOLFSSL_FILETYPE_ASN1) != WOLFSSL_SUCCESS)
    fail("cannot use the certificate", 0);
}

static int step(struct end* e) {
  int ret = e->server ? wolfSSL_accept(e->ssl) : wolfSSL_connect(e->ssl);
  if (ret == WOLFSSL_SUCCESS) return 1;
  int error = wolfSSL_get_error(e->ssl, ret);
  if (error == WOLFSSL_ERROR_WANT_READ || error == WOLFSSL_ERROR_WANT_WRITE) return 0;
  fail("the handshake failed", error);
  return 0;
}

/* The client writes the chunk whole; the server reads it all. */
static void chunk(struct end* client, struct end* server, const unsigned char* data, unsigned char* sink,
                  size_t size) {
  for (size_t sent = 0; sent < size;) {
    int n = wolfSSL_write(client->ssl, data + sent, (int)(size - sent));
    if (n <= 0) fail("cannot write", wolfSSL_get_error(client->ssl, n));
    sent += (size_t)n;
  }
  for (size_t left = size; left > 0;) {
    int n = wolfSSL_read(server->ssl, sink, (int)left);
    if (n > 0) {
      left -= (size_t)n;
    } else if (wolfSSL_get_error(server->ssl, n) != WOLFSSL_ERROR_WANT_READ ||
               server->in->size == server->in->taken) {
      fail("cannot read", wolfSSL_get_error(server->ssl, n));
    }
  }
}

/* wolfCrypt's benchmark's AES-128-GCM loop at 16 KiB blocks, for `seconds`. */
static int aead(double seconds) {
  static unsigned char plain[16384], sealed[16384], key[16], iv[12], aad[13], tag[16];
  Aes aes;
  wc_AesInit(&aes, NULL, INVALID_DEVID);
  if (wc_AesGcmSetKey(&aes, key, sizeof key) != 0) fail("cannot set the key", 0);
  size_t blocks = 0;
  const double start = seconds_now();
  double now = start;
  do {
    for (int i = 0; i < 16; ++i, ++blocks)
      if (wc_AesGcmEncrypt(&aes, sealed, plain, sizeof plain, iv, sizeof iv, tag, sizeof tag, aad, sizeof aad) != 0)
        fail("cannot seal", 0);
    now = seconds_now();
  } while (now - start < seconds);
  const double us = (now - start) * 1e6;
  printf("cipher=AES-128-GCM bytes=%zu chunk=16384 us=%.0f MBps=%.1f\n", blocks * sizeof plain, us,
         (double)(blocks * sizeof plain) / us);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mem-ceiling-wolfssl MIB CHUNK_KIB  |  mem-ceiling-wolfssl --aead SECONDS\n");
    return 2;
  }
  if (strcmp(argv[1], "--aead") == 0) return aead(atof(argv[2]));
  const size_t total = (size_t)atol(argv[1]) << 20;
  const size_t size = (size_t)atol(argv[2]) << 10;
  wolfSSL_Init();
  WOLFSSL_CTX* server_ctx = wolfSSL_CTX_new(wolfTLSv1_3_server_method());
  WOLFSSL_CTX* client_ctx = wolfSSL_CTX_new(wolfTLSv1_3_client_method());
  use_certificate(server_ctx);
  wolfSSL_CTX_set_verify(client_ctx, WOLFSSL_VERIFY_NONE, NULL);
  if (wolfSSL_CTX_set_cipher_list(client_ctx, "TLS13-AES128-GCM-SHA256") != WOLFSSL_SUCCESS)
    fail("no AES-128-GCM", 0);
  struct pipe to_server = {0}, to_client = {0};
  struct end client = {wolfSSL_new(client_ctx), &to_client, &to_server, 0};
  struct end server = {wolfSSL_new(server_ctx), &to_server, &to_client, 1};
  struct end* ends[] = {&client, &server};
  for (int i = 0; i < 2; ++i) {
    wolfSSL_SSLSetIORecv(ends[i]->ssl, pull);
    wolfSSL_SSLSetIOSend(ends[i]->ssl, push);
    wolfSSL_SetIOReadCtx(ends[i]->ssl, ends[i]);
    wolfSSL_SetIOWriteCtx(ends[i]->ssl, ends[i]);
  }
  int client_done = 0, server_done = 0;
  for (int i = 0; i < 64 && !(client_done && server_done); ++i) {
    if (!client_done) client_done = step(&client);
    if (!server_done) server_done = step(&server);
  }
  unsigned char* data = malloc(size);
  unsigned char* sink = malloc(size);
  memset(data, 0x42, size);
  for (int i = 0; i < 4; ++i) chunk(&client, &server, data, sink, size); /* buffers allocated, caches warm */
  const size_t chunks = total / size > 0 ? total / size : 1;
  const double start = seconds_now();
  for (size_t i = 0; i < chunks; ++i) chunk(&client, &server, data, sink, size);
  const double us = (seconds_now() - start) * 1e6;
  printf("cipher=AES-128-GCM bytes=%zu chunk=%zu us=%.0f MBps=%.1f\n", chunks * size, size, us,
         (double)(chunks * size) / us);
  return 0;
}
