#!/usr/bin/env bash
# What `tlscmp certs` does, step by step with the openssl command line:
# a CA, a server certificate (subjectAltNames: localhost, 127.0.0.1, ::1 and
# each extra host) and a client certificate, all with keys of one type
# (ECDSA P-256 unless told otherwise), signed with SHA-256.
# Usage: scripts/gen-certs.sh [--key-type rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384|ed25519] [DIR] [HOST ...]
#        (DIR defaults to certs)
set -euo pipefail
key_type=ecdsa-p256
if [ "${1:-}" = "--key-type" ]; then
  key_type=${2:?--key-type needs a type}
  shift 2
fi
case $key_type in
  rsa-2048 | rsa-3072 | rsa-4096) genpkey=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${key_type#rsa-}") ;;
  ecdsa-p256) genpkey=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
  ecdsa-p384) genpkey=(-algorithm EC -pkeyopt ec_paramgen_curve:P-384) ;;
  ed25519) genpkey=(-algorithm ED25519) ;;
  *) echo "gen-certs.sh: unknown key type '$key_type'" >&2; exit 2 ;;
esac
# Ed25519 signs the message itself: no digest to name.
digest=(-sha256)
[ "$key_type" = ed25519 ] && digest=()
dir=${1:-certs}
shift || true
days=365
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT  # the CA key lives only here, and goes

san="DNS:localhost,IP:127.0.0.1,IP:::1"
for host in "$@"; do
  if [[ $host =~ ^[0-9.]+$ || $host == *:* ]]; then san="$san,IP:$host"; else san="$san,DNS:$host"; fi
done

umask 077
# 1. The CA: a key and a self-signed certificate that may sign others.
openssl genpkey "${genpkey[@]}" -out "$work/ca.key" 2>/dev/null
openssl req -x509 -new -key "$work/ca.key" "${digest[@]}" -days "$days" -subj "/O=tlscmp/CN=tlscmp CA" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$dir/ca.pem"

# 2. A key, a request and a CA-signed certificate for each of server and client.
issue() {  # name common-name extended-key-usage [subjectAltName]
  local name=$1 cn=$2 eku=$3 alt=${4:-}
  openssl genpkey "${genpkey[@]}" -out "$dir/$name.key" 2>/dev/null
  openssl req -new -key "$dir/$name.key" -subj "/O=tlscmp/CN=$cn" -out "$work/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$eku"
    echo "subjectKeyIdentifier=hash"
    echo "authorityKeyIdentifier=keyid:always"
    [ -n "$alt" ] && echo "subjectAltName=$alt"
  } >"$work/$name.ext"
  openssl x509 -req -in "$work/$name.csr" -CA "$dir/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -CAserial "$work/ca.srl" \
    -days "$days" "${digest[@]}" -extfile "$work/$name.ext" -out "$dir/$name.pem" 2>/dev/null
}
issue server "tlscmp server" serverAuth "$san"
issue client "tlscmp client" clientAuth
chmod 644 "$dir/ca.pem" "$dir/server.pem" "$dir/client.pem"

# 3. Check the result as a client would.
openssl verify -CAfile "$dir/ca.pem" "$dir/server.pem" "$dir/client.pem"
echo "wrote $dir/{ca.pem, server.pem, server.key, client.pem, client.key}: $key_type keys; server names: $san"
