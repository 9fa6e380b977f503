# demo-site.sh, sourced by demo.sh and demo-cutover.sh: lays out the
# example site in $DEMO (emptied first): its document root, alice's
# password file, and examples/demo/legacy.conf with its placeholders
# filled in. expand fills them in any other file.
expand() { sed -e "s|@DOCROOT@|$DEMO/docroot|g" -e "s|@DEMO@|$DEMO|g" "$@"; }

demo_site() {
  rm -rf "$DEMO"; mkdir -p "$DEMO/docroot"/{admin,members,images} "$DEMO/run"
  chmod 755 "$DEMO"
  echo '<h1>Public home</h1>' > "$DEMO/docroot/index.html"
  echo '<h1>Admin console</h1>' > "$DEMO/docroot/admin/index.html"
  echo '<h1>Members area</h1>' > "$DEMO/docroot/members/index.html"
  echo 'GIF89a' > "$DEMO/docroot/images/logo.gif"
  echo 'DROP TABLE users;' > "$DEMO/docroot/backup.sql"
  htpasswd -cbm "$DEMO/htpasswd" alice wonderland 2>/dev/null
  expand examples/demo/legacy.conf > "$DEMO/legacy.conf"
}
