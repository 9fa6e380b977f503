# orderly for deploy/compose.yaml. Relative paths are relative to this
# file, /etc/orderly in the container.
listen = ":8080"

# The httpd service: Apache 2.4 with no access rules (compose/httpd.conf).
backend "httpd" {
  url = "http://httpd:80"
}

legacy {
  files     = ["legacy/httpd.conf"]
  semantics = "2.2"
  # The legacy rules name /var/www/html, which the backend serves; orderly
  # reads the same files where compose.yaml mounts them for it.
  path_map = { "/var/www/html" = "www" }
}

# Requests reach orderly from the Docker networks' gateways (a curl on the
# host) or containers: trust their X-Forwarded-For here, in this demo.
# In production, list only your load balancers.
client_ip {
  trusted_proxies = ["172.16.0.0/12", "192.168.0.0/16"]
}

mode       = "enforce"
error_log  = "stdout"
access_log = "stdout"

# SIGTERM: requests in flight finish within this; compose.yaml's
# stop_grace_period (40s) is longer.
shutdown_grace = "30s"

# The prometheus service scrapes orderly:9100.
metrics {
  listen = ":9100"
}
