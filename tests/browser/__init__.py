"""Tests that look at pages as a person would: headless Chromium."""
