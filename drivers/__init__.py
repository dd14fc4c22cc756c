"""shoe2mqtt drivers package."""
