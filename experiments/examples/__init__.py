"""Short runnable examples of pipslab with other libraries (see each module's docstring)."""
