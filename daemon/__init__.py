"""shoe2mqtt daemon package."""
