"""What the server reports about itself: Prometheus metrics and connection-error logging."""
