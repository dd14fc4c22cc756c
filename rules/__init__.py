"""shoe2mqtt rules package."""
