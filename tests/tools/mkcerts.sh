#!/bin/sh
# mkcerts.sh DIR - make a throw-away test PKI with openssl, at test time.
#
#   ca.pem / ca.key           the test CA (pass as --cert / OW_CA_FILE)
#   server.pem / server.key   signed by the CA; SAN localhost, r2.localhost,
#                             127.0.0.1, ::1
#   wrongname.pem             signed by the CA, SAN other.invalid only
#   expired.pem               signed by the CA, valid 2020-01-01..2021-01-01
#   untrusted.pem             same SANs as server.pem, signed by another CA
# All leaf certificates use server.key.  Nothing here is secret.
set -eu
d=$1
mkdir -p "$d"
cd "$d"
q() { "$@" >/dev/null 2>&1 || { echo "mkcerts: failed: $*" >&2; exit 1; }; }

mkca() { # name subject
	q openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" \
		-days 3650 -subj "/CN=$2" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign
}

leaf() { # out ca san
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$3" > "$1.ext"
	q openssl x509 -req -in server.csr -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
		-days 825 -extfile "$1.ext" -out "$1.pem"
}

expired() { # signed by ca with dates in the past (needs `openssl ca`)
	mkdir -p ca.db
	: > ca.db/index.txt
	echo 1000 > ca.db/serial
	cat > ca.cnf <<EOF
[ca]
default_ca = t
[t]
dir = ca.db
database = ca.db/index.txt
serial = ca.db/serial
new_certs_dir = ca.db
default_md = sha256
policy = p
copy_extensions = none
x509_extensions = e
[p]
commonName = supplied
[e]
subjectAltName = DNS:localhost,DNS:r2.localhost,IP:127.0.0.1,IP:::1
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
EOF
	q openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr \
		-startdate 20200101000000Z -enddate 20210101000000Z -out expired.pem
}

SAN='DNS:localhost,DNS:r2.localhost,IP:127.0.0.1,IP:::1'
mkca ca "offwheel test CA"
mkca other-ca "some other CA"
q openssl req -new -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost
leaf server ca "$SAN"
leaf wrongname ca DNS:other.invalid
leaf untrusted other-ca "$SAN"
expired
