"""The built-in predictor: a small learned ranker of pass lists that needs no GPU and no download."""
