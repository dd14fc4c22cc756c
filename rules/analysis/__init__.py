"""Exact mathematics of the regulated wagers, and a tally of what the real engine settles.

Pure and standard library only, like the rest of `rules/`: probabilities are exact
`fractions.Fraction`s worked out from a shoe's composition by closed forms or full
enumeration, never by sampling; floats appear only where statistics need them
(`statistics.py`). `simulation.py` plays seeded shoes through `rules.engine.TableEngine`,
the engine the daemon runs, so the two can be held against each other.

    shoe              shoe compositions and the point classes the formulas count
    outcomes          a wager's outcomes with their odds: hit frequency, return, house edge
    twenty_point_bonus  13:69F-2.24 from the player's two cards and the dealer's two
    optional_bonus    13:69F-26.6 from the dealer's first three cards
    dealer_totals     the dealer's final total, by exact recursion over the remaining shoe
    tables            what a table configuration posts, analysed
    simulation        seeded rounds through the engine, tallied exactly
    statistics        standard errors and confidence intervals, line by line
    comparison        a simulation's tally beside the exact analysis of the same table
"""
