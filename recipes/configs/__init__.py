"""One module per recipe; each exposes `get_config() -> ml_collections.ConfigDict`."""
