#!/usr/bin/env bash
# Makes the TLS files of a Meridian deployment with openssl (docs/deploy.md:
# TLS and tokens). Every key is EC P-256, every file lands in DIR, keys 0600.
#
#   deploy/make-certs.sh DIR NAME...      a CA, and the collector's certificate
#                                         for the names clients dial (DNS names
#                                         or IP addresses; localhost and
#                                         127.0.0.1 are always added)
#   deploy/make-certs.sh DIR --client CN  one more client certificate (mutual
#                                         TLS), signed by DIR/ca.key
#
# The first form writes DIR/ca.crt and ca.key (the CA: keep ca.key offline),
# DIR/collector.crt and collector.key, and DIR/agent.crt and agent.key (the
# client certificate of the agents). The second writes DIR/CN.crt and CN.key,
# e.g. one for each user of the CLI. An existing file is never overwritten.
set -euo pipefail
usage() {
  echo "usage: $0 DIR NAME... | $0 DIR --client CN" >&2
  exit 2
}
[ $# -ge 2 ] || usage
dir=$1
shift
umask 077
mkdir -p "$dir"
days=${MERIDIAN_CERT_DAYS:-825}

# sign NAME CN EXTENSIONS: DIR/NAME.key and DIR/NAME.crt, signed by the CA.
sign() {
  local name=$1 cn=$2 extensions=$3 file
  for file in "$dir/$name.key" "$dir/$name.crt"; do
    [ ! -e "$file" ] || { echo "$0: $file exists" >&2 && exit 1; }
  done
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "/CN=$cn" 2>/dev/null
  printf '%s\n' "$extensions" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days "$days" -extfile "$dir/$name.ext" \
    -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
  chmod 0644 "$dir/$name.crt"
  echo "$dir/$name.crt, $dir/$name.key"
}
client_extensions='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth'

if [ "$1" = --client ]; then
  if [ $# -ne 2 ] || [ -z "$2" ]; then usage; fi
  [ -f "$dir/ca.key" ] || { echo "$0: no CA in $dir (make one first)" >&2 && exit 1; }
  sign "$2" "$2" "$client_extensions"
  exit 0
fi

[ ! -e "$dir/ca.crt" ] || { echo "$0: $dir/ca.crt exists" >&2 && exit 1; }
openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" -days $((days * 2)) \
  -subj "/CN=Meridian CA" 2>/dev/null
chmod 0644 "$dir/ca.crt"
echo "$dir/ca.crt, $dir/ca.key (keep the key offline)"
names="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then
    names+=",IP:$name"
  else
    names+=",DNS:$name"
  fi
done
sign collector meridian-collector "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$names"
sign agent meridian-agent "$client_extensions"
