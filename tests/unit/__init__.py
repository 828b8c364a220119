"""Unit tests of the pipeline engine, one module per engine module."""
