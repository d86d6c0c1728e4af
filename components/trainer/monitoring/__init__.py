"""What training reports while and after it runs: speed and input wait, Prometheus metrics, the training
summary and the Model artifact's properties."""
