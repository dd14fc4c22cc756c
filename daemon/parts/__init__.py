"""The daemon's parts, built by its composition root (daemon.service): one concern each.

A part that runs does so as one named task of the daemon's task group (`run`), ended by
cancellation when the daemon stops; the rest are called by the table's task as it commits.
"""
