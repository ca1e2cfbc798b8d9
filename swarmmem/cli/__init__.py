"""The ``swarmmem`` command line."""
