"""ParametricSkills Studio training package: base LM, hypernetwork, training loops, bundle export."""
