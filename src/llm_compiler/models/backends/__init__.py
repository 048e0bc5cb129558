"""One model backend per module; each is imported only when a model spec names it."""
