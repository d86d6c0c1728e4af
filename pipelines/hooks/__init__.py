"""Run hooks: the phases a hook sees (`phases`) and the built-in Prometheus/Pushgateway hook."""
