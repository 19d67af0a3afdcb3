"""The solver: batched least squares and non-negative least squares over (candidate, target) systems."""
