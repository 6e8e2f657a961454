#!/bin/sh
# tests/smtp/certs.sh: a throw-away test CA and a server certificate signed
# by it (ECDSA keys, valid 2 days), made with certtool (gnutls-bin), for the
# fake SMTP servers' STARTTLS (tests/smtp/fake_smtp.py --cert --key); the
# client under test trusts DIR/ca.pem.
#
#   certs.sh DIR CN [NAME...]
#
# CN is the server certificate's common name; each NAME is one of its
# subject alternative names, an IPv4 address or a DNS name ("*.x.test"
# allowed). Writes DIR/ca.pem, DIR/ca.key, DIR/server.pem, DIR/server.key
# (and the certtool templates); certtool's output goes to standard output.
# Exit status 0, or 1 when certtool failed or is not installed.
set -u

[ $# -ge 2 ] || { echo "usage: certs.sh DIR CN [NAME...]" >&2; exit 1; }
command -v certtool >/dev/null 2>&1 ||
	{ echo "certs.sh: certtool (gnutls-bin) is not installed" >&2; exit 1; }
dir=$1
cn=$2
shift 2
mkdir -p "$dir" || exit 1

cat >"$dir/ca.tmpl" <<EOF
cn = "svc test CA"
ca
cert_signing_key
expiration_days = 2
EOF
{
	echo "cn = \"$cn\""
	for n in "$@"; do
		case $n in
		*[!0-9.]*) echo "dns_name = \"$n\"" ;;
		*) echo "ip_address = \"$n\"" ;;
		esac
	done
	echo tls_www_server
	echo signing_key
	echo encryption_key
	echo expiration_days = 2
} >"$dir/server.tmpl"

certtool --generate-privkey --key-type=ecdsa --outfile "$dir/ca.key" &&
certtool --generate-self-signed --load-privkey "$dir/ca.key" \
    --template "$dir/ca.tmpl" --outfile "$dir/ca.pem" &&
certtool --generate-privkey --key-type=ecdsa --outfile "$dir/server.key" &&
certtool --generate-certificate --load-privkey "$dir/server.key" \
    --load-ca-certificate "$dir/ca.pem" --load-ca-privkey "$dir/ca.key" \
    --template "$dir/server.tmpl" --outfile "$dir/server.pem" || exit 1
