"""Layer classes, one module per family."""
