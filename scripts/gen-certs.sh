#!/usr/bin/env bash
# What `tlscmp certs` does, step by step with the openssl command line:
# a CA, a server certificate (subjectAltNames: localhost, 127.0.0.1, ::1 and
# each extra host) and a client certificate, all with keys of one type
# (ECDSA P-256 unless told otherwise), signed with SHA-256. A CA already in
# DIR (ca.pem and ca.key) is reused, so that copies of ca.pem on clients keep
# working; --new-ca makes a new one.
# Usage: scripts/gen-certs.sh [--key-type rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384|ed25519] [--new-ca]
#                             [DIR] [HOST ...]   (DIR defaults to certs)
set -euo pipefail
key_type=ecdsa-p256
new_ca=0
while [ $# -gt 0 ]; do
  case $1 in
    --key-type)
      key_type=${2:?--key-type needs a type}
      shift 2
      ;;
    --new-ca)
      new_ca=1
      shift
      ;;
    *) break ;;
  esac
done
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
trap 'rm -rf "$work"' EXIT

san="DNS:localhost,IP:127.0.0.1,IP:::1"
for host in "$@"; do
  if [[ $host =~ ^[0-9.]+$ || $host == *:* ]]; then san="$san,IP:$host"; else san="$san,DNS:$host"; fi
done

umask 077
# 1. The CA: a key and a self-signed certificate that may sign others; or the
#    one DIR already holds.
if [ -f "$dir/ca.pem" ] && [ $new_ca = 0 ]; then
  [ -f "$dir/ca.key" ] || {
    echo "gen-certs.sh: $dir/ca.pem is there but not its key ($dir/ca.key): --new-ca makes a new CA," \
      "and the ca.pem copies on clients then stop working" >&2
    exit 1
  }
  echo "reusing the CA in $dir/ca.pem: the ca.pem copies on clients keep working"
  made=""
  # The CA's own key type decides how it signs: Ed25519 takes no digest.
  ca_digest=(-sha256)
  ca_text=$(openssl pkey -in "$dir/ca.key" -noout -text 2>/dev/null)
  [[ $ca_text == *ED25519* ]] && ca_digest=()
else
  [ -f "$dir/ca.pem" ] && echo "--new-ca: a new CA in $dir/ca.pem; the old ca.pem copies on clients no longer work"
  openssl genpkey "${genpkey[@]}" -out "$dir/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$dir/ca.key" "${digest[@]}" -days "$days" -subj "/O=tlscmp/CN=tlscmp CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$dir/ca.pem"
  ca_digest=("${digest[@]}")
  made="ca.pem, ca.key, "
fi

# 2. A key, a request and a CA-signed certificate for each of server and client.
issue() {  # name common-name extended-key-usage [subjectAltName]
  local name=$1 cn=$2 eku=$3 alt=${4:-}
  [ -f "$dir/$name.key" ] && echo "replacing the key $dir/$name.key with a new one"
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
  openssl x509 -req -in "$work/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -CAserial "$work/ca.srl" \
    -days "$days" "${ca_digest[@]}" -extfile "$work/$name.ext" -out "$dir/$name.pem" 2>/dev/null
}
issue server "tlscmp server" serverAuth "$san"
issue client "tlscmp client" clientAuth
chmod 644 "$dir/ca.pem" "$dir/server.pem" "$dir/client.pem"

# 3. Check the result as a client would.
openssl verify -CAfile "$dir/ca.pem" "$dir/server.pem" "$dir/client.pem"
echo "wrote $dir/{${made}server.pem, server.key, client.pem, client.key}: $key_type keys; server names: $san"
