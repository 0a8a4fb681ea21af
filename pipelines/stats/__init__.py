"""The statistical eye: hold against theory, improbable luck, card counting, dealer-player collusion.

Each detector is a plain function over polars frames (``hold``, ``luck``, ``advantage``, ``collusion``);
``run.statistical_findings`` runs them over tonight and the rolling windows of the nights in the
database and puts one Benjamini-Hochberg false discovery rate (``fdr``) over every entity tested.
"""
