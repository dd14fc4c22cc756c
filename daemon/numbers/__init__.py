"""The pit's numbers: pace, handle and hold beside the exact theoretical, per table, shift,
day, dealer and floor (docs/numbers.md).

    records   a table's round-log lines folded into round and shoe records (sans-I/O)
    theory    the exact outcome distribution a wager's hold is held against
    tally     the numbers of a group of rounds, incremental; the band and its alert
    periods   shifts, gaming days, and the groups a report asks for
    sources   the lines of a state directory: archive, then the live journal (reads files)
    render    text, CSV and JSON, and sections other parts add
"""
