"""One table in the daemon: the table service (service.py) and the concerns it is built of."""
