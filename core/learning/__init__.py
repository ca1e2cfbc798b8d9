"""Learning from outcomes: verdict rewards (EMA Q-values), propagation, suppression and
promotion, and the time-decayed lessons of reflection."""
