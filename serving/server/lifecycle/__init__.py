"""Which model versions are loaded and served: file-system polling, version policies, labels, config reloads."""
