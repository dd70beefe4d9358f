"""Where inventory items come from: installed distributions, cards, asset manifests, weights, the project."""
