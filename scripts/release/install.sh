#!/bin/sh
# Installs this release of mls under PREFIX (default /opt/mls):
#
#   sudo ./install.sh [PREFIX]
#
# Copies the tree this script is in to PREFIX, replacing an earlier release there (an upgrade;
# running it twice gives the same result). The config (/etc/mls), the state (/var/lib/mls) and
# the systemd unit are left alone. Nothing is downloaded.
set -eu
umask 022
here=$(CDPATH= cd -- "$(dirname "$0")" && pwd -P)
prefix=${1:-/opt/mls}
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
prefix=${prefix%/}
release=$(sed -n 's/^mls //p' "$here/VERSION")
need=$(sed -n 's/^glibc //p' "$here/VERSION")

fail() {
  echo "install.sh: $*" >&2
  exit 1
}
[ -n "$prefix" ] || fail "PREFIX / is no place for mls: give a folder of its own, e.g. /opt/mls"

# The bundled runtime and native files need this glibc: refuse before copying anything.
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc //p') || have=
[ -n "$have" ] || fail "mls $release needs glibc $need or newer, and this system's C library is not glibc (use the container image instead)"
if [ "${have%%.*}" -lt "${need%%.*}" ] || { [ "${have%%.*}" -eq "${need%%.*}" ] && [ "${have#*.}" -lt "${need#*.}" ]; }; then
  fail "mls $release needs glibc $need or newer; this system has glibc $have (use the container image instead)"
fi

# Never replace a folder that holds something other than an mls release.
previous=
if [ -e "$prefix" ] || [ -L "$prefix" ]; then
  [ -d "$prefix" ] || fail "$prefix exists and is not a folder: choose another PREFIX"
  previous=$(sed -n 's/^mls //p' "$prefix/VERSION" 2>/dev/null) || previous=
  if [ -z "$previous" ] && [ -n "$(ls -A "$prefix")" ]; then
    fail "$prefix is not empty and holds no mls release: choose another PREFIX, or empty it"
  fi
fi

if [ "$(cd "$prefix" 2>/dev/null && pwd -P)" = "$here" ]; then
  echo "install.sh: mls $release is already in $prefix (this tree); nothing copied"
  previous=
else
  # Copied beside the old tree and swapped in, so the old one stays whole until the new one is.
  rm -rf "$prefix.new" "$prefix.old"
  mkdir -p "$(dirname "$prefix")"
  cp -R "$here" "$prefix.new"
  # Readable by every user: the systemd unit runs mls as a dynamic user.
  chmod -R u+rwX,go+rX,go-w "$prefix.new"
  if [ -d "$prefix" ]; then mv "$prefix" "$prefix.old"; fi
  mv "$prefix.new" "$prefix"
  rm -rf "$prefix.old"
  if [ -n "$previous" ]; then
    echo "install.sh: installed mls $release in $prefix, replacing mls $previous"
  else
    echo "install.sh: installed mls $release in $prefix"
  fi
fi

# Started once, as the unit would start it (no compile cache left in this user's home).
check=$(MLS_COMPILE_CACHE=off "$prefix/bin/mls" --version) || fail "$prefix/bin/mls --version failed"
echo "install.sh: $prefix/bin/mls --version: $check"

cat <<EOF

Next steps (as root):
  1. A config in /etc/mls/config.yaml, from an example; leave api.token out of it (the systemd
     unit passes the token as a credential):
       install -D -m 0644 $prefix/config/examples/file-archive.yaml /etc/mls/config.yaml
       editor /etc/mls/config.yaml
  2. The token, readable by root only:
       install -m 0600 /dev/null /etc/mls/api-token && editor /etc/mls/api-token
  3. Check both:
       MLS_API_TOKEN="\$(cat /etc/mls/api-token)" $prefix/bin/mls validate --config /etc/mls/config.yaml
  4. The service:
       install -m 0644 $prefix/config/mls.service /etc/systemd/system/mls.service
       systemctl daemon-reload && systemctl enable --now mls
EOF
if [ "$prefix" != /opt/mls ]; then
  echo "     The unit runs /opt/mls/bin/mls: set ExecStart to $prefix/bin/mls (systemctl edit mls, see docs/install.md)."
fi
if [ -n "$previous" ]; then
  echo "  Restart a running service now, so that it runs mls $release alone: systemctl restart mls"
fi
echo "  The mls command for every user: ln -sf $prefix/bin/mls /usr/local/bin/mls"
