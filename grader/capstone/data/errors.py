"""The one error of the data package (standard library only, like paths.py and wheel.py)."""


class DataError(ValueError):
    """A data source that is missing, malformed or mislabelled; the message says which and what to do."""
